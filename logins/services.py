"""What happens on a lock-out and on an unlock: recorded in the audit log of the user's firms."""
from __future__ import annotations

from django.contrib.auth import get_user_model
from django.db import transaction

from logins.models import FailedLogin
from memory.models import AuditEvent, Firm
from memory.services.audit import record

THROTTLE_ACTOR = "system:login-throttle"


def _firms_of(username: str) -> list[Firm | None]:
    """The firms whose admins must hear about this username; ``[None]`` (operators only) if none."""
    user = get_user_model().objects.filter(username=username).first()
    firms = list(Firm.objects.filter(memberships__user=user).distinct()) if user else []
    return firms or [None]


def record_lockout(*, username: str | None, ip_address: str | None, path: str) -> None:
    """A username got locked out after too many wrong passwords: one audit entry per firm."""
    username = (username or "")[:150]
    with transaction.atomic():
        for firm in _firms_of(username):
            record(
                actor=THROTTLE_ACTOR,
                event=AuditEvent.LOGIN_LOCKED_OUT,
                firm=firm,
                object_type="login",
                object_id=username,
                after={"username": username, "ip_address": ip_address, "path": path[:200]},
            )


def unlock(failed_login: FailedLogin, *, actor) -> None:
    """Forget the failed logins of one username and address (the lock-out ends now), audited."""
    username = failed_login.username or ""
    with transaction.atomic():
        for firm in _firms_of(username):
            record(
                actor=actor,
                event=AuditEvent.LOGIN_UNLOCKED,
                firm=firm,
                object_type="login",
                object_id=username,
                before={"username": username, "ip_address": failed_login.ip_address,
                        "failures": failed_login.failures_since_start},
            )
        failed_login.delete()
