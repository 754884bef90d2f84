"""Tenants and the ethical wall: firms, memberships with a role, matters and assignments."""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    ADMIN = "admin", _("firm admin")
    LAWYER = "lawyer", _("lawyer")
    ASSISTANT = "assistant", _("assistant")


class FirmQuerySet(models.QuerySet["Firm"]):
    def of_user(self, user) -> "FirmQuerySet":
        """Firms the user is a member of, in any role."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(memberships__user=user).distinct()

    def administered_by(self, user) -> "FirmQuerySet":
        if not user.is_authenticated:
            return self.none()
        return self.filter(memberships__user=user, memberships__role=Role.ADMIN).distinct()

    def visible_to(self, user) -> "FirmQuerySet":
        return self.of_user(user)


class Firm(models.Model):
    """A law firm: the tenant. Nothing of one firm is ever visible to another."""

    name = models.CharField(_("name"), max_length=200)
    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    retention_days = models.PositiveIntegerField(
        _("retention period (days)"), null=True, blank=True,
        help_text=_("Closed matters are purged this many days after closing, unless on legal hold. "
                    "Empty: kept until erased by hand (docs/records.md)."),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = FirmQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = _("firm")
        verbose_name_plural = _("firms")

    def __str__(self) -> str:
        return self.name


class MembershipQuerySet(models.QuerySet["Membership"]):
    def visible_to(self, user) -> "MembershipQuerySet":
        """Memberships of the firms the user administers (plus their own)."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(
            models.Q(firm__in=Firm.objects.administered_by(user)) | models.Q(user=user)
        )


class Membership(models.Model):
    """A user's place in a firm; a user may belong to several firms."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships",
        verbose_name=_("user"),
    )
    firm = models.ForeignKey(Firm, on_delete=models.CASCADE, related_name="memberships", verbose_name=_("firm"))
    role = models.CharField(_("role"), max_length=20, choices=Role.choices, default=Role.LAWYER)
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = MembershipQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "firm"], name="membership_unique_user_firm")
        ]
        verbose_name = _("membership")
        verbose_name_plural = _("memberships")

    def __str__(self) -> str:
        return f"{self.user} @ {self.firm} ({self.role})"

    @property
    def is_admin(self) -> bool:
        return self.role == Role.ADMIN


class MatterQuerySet(models.QuerySet["Matter"]):
    def assigned_to(self, user) -> "MatterQuerySet":
        """Matters behind the ethical wall that the user may open: assigned, in one of their firms."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(assignments__user=user, firm__memberships__user=user).distinct()

    def visible_to(self, user) -> "MatterQuerySet":
        return self.assigned_to(user)

    def manageable_by(self, user) -> "MatterQuerySet":
        """Matters whose assignments the user may change: every matter of a firm they administer."""
        return self.filter(firm__in=Firm.objects.administered_by(user))


class Matter(models.Model):
    """A case. Its memories are behind an ethical wall: only assigned users see them."""

    class Status(models.TextChoices):
        OPEN = "open", _("open")
        CLOSED = "closed", _("closed")

    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="matters", verbose_name=_("firm"))
    title = models.CharField(_("title"), max_length=300)
    reference = models.CharField(_("reference"), max_length=80, blank=True)
    description = models.TextField(_("description"), blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN, verbose_name=_("status"))
    # --- records (docs/records.md): closing starts the retention clock, a hold stops it ---
    closed_at = models.DateTimeField(_("closed at"), null=True, blank=True)
    legal_hold = models.BooleanField(
        _("legal hold"), default=False, help_text=_("Nothing of a matter on hold is purged or erased.")
    )
    legal_hold_reason = models.CharField(_("legal hold reason"), max_length=500, blank=True)
    erased_at = models.DateTimeField(
        _("erased at"), null=True, blank=True,
        help_text=_("Set when the matter's memory was erased or purged; only the reference remains."),
    )
    assigned_users = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        through="MatterAssignment",
        through_fields=("matter", "user"),
        related_name="matters",
        blank=True,
        verbose_name=_("assigned users"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = MatterQuerySet.as_manager()

    class Meta:
        ordering = ["firm", "title"]
        verbose_name = _("matter")
        verbose_name_plural = _("matters")

    def __str__(self) -> str:
        return f"{self.reference} {self.title}".strip()

    def is_assigned(self, user) -> bool:
        return self.assignments.filter(user=user).exists()


class MatterAssignment(models.Model):
    """One user put behind a matter's ethical wall by a firm admin."""

    matter = models.ForeignKey(Matter, on_delete=models.CASCADE, related_name="assignments", verbose_name=_("matter"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="matter_assignments",
        verbose_name=_("user"),
    )
    assigned_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("assigned by"),
    )
    assigned_at = models.DateTimeField(auto_now_add=True, verbose_name=_("assigned at"))

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["matter", "user"], name="assignment_unique_matter_user")
        ]
        verbose_name = _("matter assignment")
        verbose_name_plural = _("matter assignments")

    def __str__(self) -> str:
        return f"{self.user} → {self.matter}"


def auditable_by(user, *, matter_path: str = "matter") -> models.Q:
    """What a firm admin may audit: rows of the firms they administer, and still only behind
    the ethical wall (rows about a matter need an assignment to it). ``matter_path`` leads from
    the audited row to its matter."""
    return models.Q(firm__in=Firm.objects.administered_by(user)) & (
        models.Q(**{f"{matter_path}__isnull": True})
        | models.Q(**{f"{matter_path}__in": Matter.objects.assigned_to(user)})
    )
