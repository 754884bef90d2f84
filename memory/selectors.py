"""Reads of memory, always through the visibility rule."""
from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from django.db.models import Count, QuerySet

from memory.models import Firm, Matter, Membership, MemoryScope, Note


def visible_notes(user) -> QuerySet[Note]:
    return Note.objects.visible_to(user).select_related("firm", "matter", "owner")


def get_visible_note(user, note_id: UUID | str) -> Note:
    """The note if the user may see it; ``Note.DoesNotExist`` otherwise (another firm, wall, owner)."""
    return visible_notes(user).get(pk=note_id)


@dataclass(frozen=True)
class ScopeCount:
    scope: str
    label: str
    count: int


@dataclass(frozen=True)
class HomeSummary:
    firms: list[Firm]
    matters: list[Matter]
    scope_counts: list[ScopeCount]
    is_firm_admin: bool


def home_summary(user) -> HomeSummary:
    """What the home page shows: the user's firms, their matters and how much memory they can reach."""
    counts = dict(
        Note.objects.visible_to(user)
        .active()
        .values_list("memory_scope")
        .annotate(n=Count("id"))
        .values_list("memory_scope", "n")
    )
    return HomeSummary(
        firms=list(Firm.objects.of_user(user)),
        matters=list(
            Matter.objects.assigned_to(user).select_related("firm").order_by("firm__name", "reference", "title")
        ),
        scope_counts=[
            ScopeCount(scope=value, label=label, count=counts.get(value, 0))
            for value, label in MemoryScope.choices
        ],
        is_firm_admin=Firm.objects.administered_by(user).exists(),
    )


def firm_ids_of_user(user_id: int) -> list[int]:
    """The ids of the firms the user belongs to (the request log line names them)."""
    return list(Membership.objects.filter(user_id=user_id).values_list("firm_id", flat=True))
