"""The admin's view of django-axes' failed-login records (no table of its own)."""
from __future__ import annotations

from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.db import models
from django.utils.translation import gettext_lazy as _

from memory.models import Firm


class FailedLoginQuerySet(models.QuerySet["FailedLogin"]):
    def visible_to(self, user) -> "FailedLoginQuerySet":
        """Firm admins see failed logins of their firms' members only; other usernames
        (unknown, or another firm's users) are for the platform's operators."""
        if not user.is_authenticated:
            return self.none()
        members = get_user_model().objects.filter(
            memberships__firm__in=Firm.objects.administered_by(user)
        ).values("username")
        return self.filter(username__in=members)


class FailedLogin(AccessAttempt):
    """Failed logins of one username from one address; locked out at ``AXES_FAILURE_LIMIT``."""

    objects = FailedLoginQuerySet.as_manager()

    class Meta:
        proxy = True
        verbose_name = _("failed login")
        verbose_name_plural = _("failed logins and lock-outs")
