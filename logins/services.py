"""What happens on a lock-out and on an unlock: recorded in the audit log of the user's firms."""
from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from logins.models import FailedLogin
from memory.models import AuditEvent, AuditLog, Firm
from memory.services.audit import record

THROTTLE_ACTOR = "system:login-throttle"


def _firms_of(username: str) -> list[Firm | None]:
    """The firms whose admins must hear about this username; ``[None]`` (operators only) if none."""
    user = get_user_model().objects.filter(username=username).first()
    firms = list(Firm.objects.filter(memberships__user=user).distinct()) if user else []
    return firms or [None]


def record_lockout(*, username: str | None, ip_address: str | None, path: str) -> None:
    """A username got locked out after too many wrong passwords: one audit entry per firm.
    django-axes signals again on every attempt during the lock-out; those are not new lock-outs."""
    username = (username or "")[:150]
    if _already_recorded(username, ip_address):
        return
    with transaction.atomic():
        _record_for_each_firm(username, actor=THROTTLE_ACTOR, event=AuditEvent.LOGIN_LOCKED_OUT,
                              after={"username": username, "ip_address": ip_address, "path": path[:200]})


def _already_recorded(username: str, ip_address: str | None) -> bool:
    """A lock-out of this login was recorded within the cool-off time and not unlocked since."""
    entries = AuditLog.objects.filter(object_type="login", object_id=username).order_by("-created_at")
    last_lock = entries.filter(event_type=AuditEvent.LOGIN_LOCKED_OUT, after__ip_address=ip_address).first()
    if last_lock is None or last_lock.created_at < timezone.now() - settings.AXES_COOLOFF_TIME:
        return False
    return not entries.filter(event_type=AuditEvent.LOGIN_UNLOCKED, created_at__gt=last_lock.created_at).exists()


def unlock(failed_login: FailedLogin, *, actor) -> None:
    """Forget the failed logins of one username and address (the lock-out ends now), audited."""
    username = failed_login.username or ""
    with transaction.atomic():
        _record_for_each_firm(username, actor=actor, event=AuditEvent.LOGIN_UNLOCKED,
                              before={"username": username, "ip_address": failed_login.ip_address,
                                      "failures": failed_login.failures_since_start})
        failed_login.delete()


def _record_for_each_firm(username: str, *, actor, event: str, **change) -> None:
    """One audit entry about the login ``username`` in each of its firms (its admins see it)."""
    for firm in _firms_of(username):
        record(actor=actor, event=event, firm=firm, object_type="login", object_id=username, **change)
