"""Access tokens in admin: a firm admin sees their firm's tokens (never the secret, which is not
stored), when each was last used, and revokes them; and the throttle's current blocks they may
see, each liftable with a reason (audited, as ``manage.py token_blocks`` does)."""
from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import path
from django.utils.translation import gettext, gettext_lazy as _, ngettext

from connectors.models import AccessToken
from connectors.services import NoSuchBlock, lift_block, revoke_token
from connectors.throttle import blocks_seen_by
from memory.admin.base import WalledAdmin


@admin.register(AccessToken)
class AccessTokenAdmin(WalledAdmin):
    list_display = ("name", "display_prefix", "user", "firm", "scope", "expires_at", "last_used_at", "status_display")
    list_filter = ("scope", ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("name", "prefix", "user__username")
    fields = readonly_fields = ("name", "display_prefix", "user", "firm", "scope", "matters_display", "language",
                                "created_at", "expires_at", "last_used_at", "revoked_at", "revoked_by", "status_display")
    actions = ["revoke_selected"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("user", "firm", "revoked_by")

    @admin.display(description=_("token"))
    def display_prefix(self, token: AccessToken) -> str:
        return token.display_prefix

    @admin.display(description=_("status"))
    def status_display(self, token: AccessToken) -> str:
        return token.status_label()

    @admin.display(description=_("limited to matters"))
    def matters_display(self, token: AccessToken) -> str:
        matters = [f"{m.reference} {m.title}".strip() for m in token.matters.all()]
        return ", ".join(matters) or str(_("every matter the user is assigned to"))

    @admin.action(description=_("Revoke the selected tokens"))
    def revoke_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = 0
        for token in queryset.filter(revoked_at__isnull=True):
            revoke_token(token, actor=request.user, reason="revoked by a firm admin")
            count += 1
        self.message_user(request, ngettext("%(n)d token revoked.", "%(n)d tokens revoked.", count) % {"n": count},
                          messages.SUCCESS)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_actions(self, request: HttpRequest):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def get_urls(self):
        return [path("blocks/", self.admin_site.admin_view(self.blocks_view), name="connectors_token_blocks"),
                *super().get_urls()]

    def changelist_view(self, request: HttpRequest, extra_context=None):
        """The token list, with a link to the throttle's blocks this admin may lift (and how many)."""
        return super().changelist_view(request, {**(extra_context or {}),
                                                 "block_count": len(blocks_seen_by(request.user))})

    def blocks_view(self, request: HttpRequest) -> HttpResponse:
        """The blocks this admin may see (``blocks_seen_by``); a POST lifts one of them, with a reason."""
        if not self.has_view_permission(request):
            raise Http404(gettext("Not found."))
        blocks = blocks_seen_by(request.user)
        if request.method == "POST":
            kind, key = request.POST.get("kind", ""), request.POST.get("key", "")
            if not any(block.kind == kind and block.key == key for block in blocks):
                raise Http404(gettext("Not found."))
            try:
                lifted = lift_block(kind, key, actor=request.user, reason=request.POST.get("reason", "").strip())
            except NoSuchBlock:
                raise Http404(gettext("Not found.")) from None
            self.message_user(request, gettext("Lifted: %(block)s") % {"block": lifted.description()},
                              messages.SUCCESS)
            return redirect("admin:connectors_token_blocks")
        return TemplateResponse(request, "admin/connectors/token_blocks.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "blocks": blocks,
            "title": gettext("Throttled tokens and addresses"),
        })
