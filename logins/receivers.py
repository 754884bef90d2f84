"""django-axes signal → service call (no logic here)."""
from __future__ import annotations

from axes.signals import user_locked_out
from django.dispatch import receiver

from logins.services import record_lockout


@receiver(user_locked_out, dispatch_uid="logins.record_lockout")
def on_user_locked_out(sender, request=None, username=None, ip_address=None, **kwargs) -> None:
    record_lockout(username=username, ip_address=ip_address, path=getattr(request, "path", "") or "")
