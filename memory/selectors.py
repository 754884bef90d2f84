"""Reads of memory, always through the visibility rule."""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from django.db.models import Count, QuerySet

from memory.models import AuditEvent, AuditLog, Firm, Matter, Membership, MemoryScope, Note


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


def system_times_from_audit(note_ids: list[str]) -> dict[str, tuple[datetime | None, datetime | None]]:
    """Each note's system time — (stored, retired) — rebuilt from the append-only audit log
    alone: stored when ``note_created`` was recorded; retired when it was first superseded, or
    when it was forgotten; back to None when a restore made it current again, and to the
    supersession's time when a restore made it superseded again. The columns
    ``Note.stored_at`` / ``Note.retired_at`` must say the same (``tests/memory/test_system_time.py``):
    the audit is the record, the columns are its index for "as of" reads."""
    times: dict[str, tuple[datetime | None, datetime | None]] = {}
    superseded_at: dict[str, datetime] = {}
    previous: dict[str, str] = {}
    entries = (AuditLog.objects.filter(object_type="note", object_id__in=[str(i) for i in note_ids])
               .order_by("created_at", "id").values_list("object_id", "event_type", "after", "created_at"))
    for note_id, event, after, at in entries:
        stored, retired = times.get(note_id, (None, None))
        if event == AuditEvent.NOTE_CREATED:
            stored = at
        status = after.get("status") if isinstance(after, dict) else None
        if status == Note.Status.SUPERSEDED:
            retired = superseded_at.setdefault(note_id, at)
        elif status == Note.Status.FORGOTTEN and previous.get(note_id) != Note.Status.FORGOTTEN:
            retired = at  # the moment it was forgotten
        elif status == Note.Status.ACTIVE:
            retired = None
        if status is not None:
            previous[note_id] = status
        times[note_id] = (stored, retired)
    return times
