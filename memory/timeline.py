"""A note's evolution history as a readable timeline: when, what happened, who, why, and each
changed field as "before → after" in words (the admin change and history pages and the
"my memory" page show it; docs/my-memory-and-admin.md). A read: nothing is written."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _

from memory.models import Note

EVENT_LABELS = {
    "corrected": _("corrected by a person"),
    "evolved": _("refined by a newer note (A-Mem evolution)"),
    "superseded": _("superseded by a newer version"),
    "supersedes": _("replaces an earlier version"),
    "mentioned": _("stated again"),
    "successor_deleted": _("its newer version was deleted"),
    "forgotten": _("forgotten by its user"),
    "restored": _("restored after being forgotten"),
    "story_provenance": _("provenance set by the demo story"),
    "promoted": _("promoted to the user profile"),
}

# Extra keys of an entry worth a line of their own, with their label.
DETAIL_LABELS = {
    "reason": _("reason"),
    "triggered_by": _("triggered by note"),
    "superseded_by": _("superseded by note"),
    "supersedes": _("replaces note"),
    "previous_content": _("earlier content"),
    "source": _("source"),
}

# Values longer than this are cut in the timeline (the audit entry keeps the whole text).
MAX_VALUE_CHARS = 300


@dataclass(frozen=True)
class FieldChange:
    label: str
    before: str
    after: str


@dataclass(frozen=True)
class TimelineEntry:
    at: datetime | None
    event: str
    label: str
    by: str
    changes: list[FieldChange] = field(default_factory=list)
    details: list[tuple[str, str]] = field(default_factory=list)


def _as_time(value: Any) -> datetime | None:
    """An ISO timestamp from the history, in the firm's time zone (settings.TIME_ZONE)."""
    parsed = parse_datetime(value) if isinstance(value, str) else None
    return timezone.localtime(parsed) if parsed and timezone.is_aware(parsed) else parsed


def _field_label(name: str) -> str:
    try:
        return str(Note._meta.get_field(name).verbose_name)
    except FieldDoesNotExist:
        return name.replace("_", " ")


def _as_text(name: str, value: Any) -> str:
    """One value in words: choices by their label, times local, lists joined, empty as a dash."""
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, list):
        return "、".join(str(item) for item in value)[:MAX_VALUE_CHARS]
    if isinstance(value, str):
        moment = _as_time(value) if name in ("valid_to", "valid_from", "said_at") else None
        if moment is not None:
            return f"{moment:%Y-%m-%d %H:%M}"
        try:
            choices = dict(Note._meta.get_field(name).choices or ())
        except FieldDoesNotExist:
            choices = {}
        if value in choices:
            return str(choices[value])
        return value if len(value) <= MAX_VALUE_CHARS else value[:MAX_VALUE_CHARS] + "…"
    return str(value)


def note_timeline(note: Note) -> list[TimelineEntry]:
    """The note's evolution history, oldest first, each step in words."""
    entries = []
    for raw in note.evolution_history or []:
        if not isinstance(raw, dict):
            continue
        event = str(raw.get("event", ""))
        changes = raw.get("changes") or {}
        entries.append(
            TimelineEntry(
                at=_as_time(raw.get("at")),
                event=event,
                label=str(EVENT_LABELS.get(event, event.replace("_", " "))),
                by=str(raw.get("by", "")),
                changes=[
                    FieldChange(_field_label(name), _as_text(name, pair[0]), _as_text(name, pair[1]))
                    for name, pair in changes.items()
                    if isinstance(pair, (list, tuple)) and len(pair) == 2
                ],
                details=[
                    (str(label), _as_text(key, raw[key]))
                    for key, label in DETAIL_LABELS.items()
                    if raw.get(key)
                ],
            )
        )
    return entries
