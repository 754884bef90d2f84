"""Login pages of our own: the lock-out page (django-axes ``AXES_LOCKOUT_CALLABLE``, HTTP 429)
and a password reset that does not claim a mail was sent when it was not."""
from __future__ import annotations

import logging
import math
import smtplib

from django.conf import settings
from django.contrib.auth import views as auth_views
from django.core.mail import get_connection
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _

from logins.forms import TruthfulPasswordResetForm
from logins.mail import NoMailServer

logger = logging.getLogger("legalmem.logins")


def locked_out(request: HttpRequest, original_response: HttpResponse | None = None,
               credentials: dict | None = None) -> HttpResponse:
    minutes = math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    context = {"failure_limit": settings.AXES_FAILURE_LIMIT, "minutes": minutes}
    return render(request, "registration/locked_out.html", context, status=429)


class TruthfulPasswordResetView(auth_views.PasswordResetView):
    """Says "no mail server is configured" or "the mail server refused" instead of "sent"."""

    form_class = TruthfulPasswordResetForm
    template_name = "registration/password_reset_form.html"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "mail_configured": mail_configured()}

    def form_valid(self, form):
        if not mail_configured():
            form.add_error(None, _("Password reset by email is not available: no mail server is configured. "
                                   "Ask your firm's administrator to set a new password."))
            return self.render_to_response(self.get_context_data(form=form), status=503)
        try:
            # Connect first, whoever the address belongs to: a server that is down or refuses
            # us gives the same answer for every address.
            with get_connection(fail_silently=False) as connection:
                form.connection = connection
                return super().form_valid(form)
        except (smtplib.SMTPException, OSError, NoMailServer) as error:
            logger.warning("password reset mail not sent: %s", error)
            form.add_error(None, _("The mail server did not accept the message, so no email was sent. "
                                   "Try again later or ask your firm's administrator."))
            return self.render_to_response(self.get_context_data(form=form), status=502)


def mail_configured() -> bool:
    return settings.EMAIL_BACKEND != "logins.mail.NoMailServerBackend"
