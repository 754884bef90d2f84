"""Writing tenancy: firms, memberships, matters and the ethical wall's assignments — all audited."""
from __future__ import annotations

from django.db import transaction

from memory.models import AuditEvent, Firm, Matter, MatterAssignment, Membership, Role
from memory.services.audit import record


class AccessChangeError(ValueError):
    """An assignment or membership change that would break tenancy."""


def create_firm(*, name: str, slug: str, actor) -> Firm:
    """A new firm, audited."""
    with transaction.atomic():
        firm = Firm.objects.create(name=name, slug=slug)
        record(
            actor=actor,
            event=AuditEvent.FIRM_CREATED,
            firm=firm,
            object_type="firm",
            object_id=firm.pk,
            after={"name": name, "slug": slug},
        )
    return firm


def set_membership(*, firm: Firm, user, role: str, actor) -> Membership:
    """Add the user to the firm, or change their role."""
    if role not in Role.values:
        raise AccessChangeError(f"unknown role {role!r}; expected one of {', '.join(Role.values)}")
    with transaction.atomic():
        membership, created = Membership.objects.select_for_update().get_or_create(
            firm=firm, user=user, defaults={"role": role}
        )
        before = None if created else {"role": membership.role}
        if not created and membership.role == role:
            return membership
        membership.role = role
        membership.save(update_fields=["role"])
        record(
            actor=actor,
            event=AuditEvent.MEMBERSHIP_CHANGED,
            firm=firm,
            object_type="membership",
            object_id=membership.pk,
            before=before,
            after={"user": user.get_username(), "role": role},
        )
    return membership


def remove_membership(membership: Membership, *, actor) -> None:
    """Remove a user from a firm, and from every matter of that firm."""
    with transaction.atomic():
        for assignment in MatterAssignment.objects.filter(
            user=membership.user, matter__firm=membership.firm
        ).select_related("matter"):
            unassign_user(assignment, actor=actor)
        record(
            actor=actor,
            event=AuditEvent.MEMBERSHIP_REMOVED,
            firm=membership.firm,
            object_type="membership",
            object_id=membership.pk,
            before={"user": membership.user.get_username(), "role": membership.role},
        )
        membership.delete()


def create_matter(*, firm: Firm, title: str, actor, reference: str = "", description: str = "") -> Matter:
    with transaction.atomic():
        matter = Matter.objects.create(
            firm=firm, title=title, reference=reference, description=description
        )
        record(
            actor=actor,
            event=AuditEvent.MATTER_CREATED,
            firm=firm,
            object_type="matter",
            object_id=matter.pk,
            after={"title": title, "reference": reference},
        )
    return matter


def assign_user(*, matter: Matter, user, actor) -> MatterAssignment:
    """Put a member of the matter's firm behind its ethical wall."""
    if not Membership.objects.filter(firm=matter.firm, user=user).exists():
        raise AccessChangeError(f"{user.get_username()} is not a member of {matter.firm}")
    with transaction.atomic():
        assignment, created = MatterAssignment.objects.get_or_create(
            matter=matter,
            user=user,
            defaults={"assigned_by": None if isinstance(actor, str) else actor},
        )
        if created:
            record(
                actor=actor,
                event=AuditEvent.MATTER_ASSIGNED,
                firm=matter.firm,
                object_type="matter",
                object_id=matter.pk,
                after={"user": user.get_username()},
            )
    return assignment


def unassign_user(assignment: MatterAssignment, *, actor) -> None:
    with transaction.atomic():
        record(
            actor=actor,
            event=AuditEvent.MATTER_UNASSIGNED,
            firm=assignment.matter.firm,
            object_type="matter",
            object_id=assignment.matter_id,
            before={"user": assignment.user.get_username()},
        )
        assignment.delete()


MATTER_EDITABLE_FIELDS = ("title", "reference", "description", "status")


def update_matter(matter: Matter, changes: dict, *, actor) -> Matter:
    """Change a matter's descriptive fields (never its firm)."""
    unknown = set(changes) - set(MATTER_EDITABLE_FIELDS)
    if unknown:
        raise AccessChangeError(f"these fields cannot be changed: {', '.join(sorted(unknown))}")
    before = {name: getattr(matter, name) for name in changes}
    with transaction.atomic():
        for name, value in changes.items():
            setattr(matter, name, value)
        matter.save(update_fields=list(changes) or None)
        record(
            actor=actor,
            event=AuditEvent.MATTER_UPDATED,
            firm=matter.firm,
            object_type="matter",
            object_id=matter.pk,
            before=before,
            after={name: getattr(matter, name) for name in changes},
        )
    return matter
