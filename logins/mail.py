"""The email backend when no mail server is configured: sending fails with a clear reason."""
from __future__ import annotations

from django.core.mail.backends.base import BaseEmailBackend


class NoMailServer(Exception):
    """EMAIL_HOST is not set, so nothing can be sent."""


class NoMailServerBackend(BaseEmailBackend):
    def send_messages(self, email_messages) -> int:
        if not self.fail_silently and email_messages:
            raise NoMailServer("no mail server is configured (EMAIL_HOST is not set)")
        return 0
