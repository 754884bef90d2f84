"""The user's own token page: list, make (the secret shown once, with a ready HTTP client
configuration) and revoke their tokens."""
from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from connectors.client_config import http_client_config
from connectors.forms import NewTokenForm
from connectors.models import AccessToken
from connectors.selectors import tokens_of
from connectors.services import TokenError, create_token, revoke_token


@never_cache
@login_required
def tokens(request: HttpRequest) -> HttpResponse:
    """The list and the form; a POST makes a token and shows its secret on this response only."""
    form = NewTokenForm(request.POST or None, user=request.user)
    new_secret, status = None, 200
    if request.method == "POST":
        if form.is_valid():
            data = form.cleaned_data
            try:
                made = create_token(request.user, firm=data["firm"], name=data["name"], scope=data["scope"],
                                    days=data["days"], matters=data["matters"], language=data["language"])
            except TokenError as error:
                form.add_error(None, str(error))
                status = 400
            else:
                new_secret = made.secret
                form = NewTokenForm(user=request.user)
        else:
            status = 400
    mcp_url = request.build_absolute_uri("/mcp")
    return render(request, "connectors/tokens.html", {
        "form": form, "tokens": tokens_of(request.user), "new_secret": new_secret, "mcp_url": mcp_url,
        "client_config": json.dumps(http_client_config(mcp_url, new_secret), indent=2) if new_secret else "",
    }, status=status)


@login_required
@require_POST
def revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    token = AccessToken.objects.owned_by(request.user).filter(pk=token_id).first()
    if token is None:
        raise Http404(_("No such token."))
    revoke_token(token, actor=request.user, reason="revoked by its owner")
    messages.success(request, _("The token was revoked: it no longer works anywhere."))
    return redirect("connector-tokens")
