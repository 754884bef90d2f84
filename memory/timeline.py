"""A note's evolution history as a readable timeline: when, what happened, who, why, and each
changed field as "before → after" in words (the admin change and history pages and the
"my memory" page show it; docs/my-memory-and-admin.md). A read: nothing is written."""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.exceptions import FieldDoesNotExist
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _

from memory.labels import actor_display, event_tag, source_key_label
from memory.models import Note

EVENT_LABELS = {
    "corrected": _("corrected by a person"),
    "evolved": _("refined by a newer note"),
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

# Keys whose value is another note's id: shown by that note's words when the reader may see it.
NOTE_REFERENCES = ("triggered_by", "superseded_by", "supersedes")

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


def _note_reference(value: str, visible: dict[str, str] | None) -> str:
    """Another note in words: its content when the reader may see it; otherwise (or without a
    reader, ``visible is None``) "another note" — never its raw id."""
    if visible and value in visible:
        content = visible[value]
        return "「" + (content if len(content) <= 40 else content[:40] + "…") + "」"
    return str(_("another note"))


def _as_text(name: str, value: Any, visible: dict[str, str] | None = None) -> str:
    """One value in words: choices by their label, times local, lists joined, empty as a dash."""
    if value is None or value == "" or value == []:
        return "—"
    if name in NOTE_REFERENCES and isinstance(value, str):
        return _note_reference(value, visible)
    if name == "source" and isinstance(value, str):
        return source_key_label(value)
    if name == "tags" and isinstance(value, list):
        return "、".join(event_tag(str(item)) for item in value)[:MAX_VALUE_CHARS]
    if name == "source_message_ids" and isinstance(value, list):
        return "、".join(f"#{item}" for item in value)[:MAX_VALUE_CHARS]
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


def _referenced_notes(note: Note, viewer) -> dict[str, str]:
    """Content of the notes the history refers to that ``viewer`` may see (none without one)."""
    ids = set()
    for raw in note.evolution_history or []:
        if not isinstance(raw, dict):
            continue
        ids.update(str(raw[key]) for key in NOTE_REFERENCES if isinstance(raw.get(key), str))
        for key, pair in (raw.get("changes") or {}).items():
            if key in NOTE_REFERENCES and isinstance(pair, (list, tuple)):
                ids.update(str(item) for item in pair if isinstance(item, str))
    if viewer is None or not ids:
        return {}
    valid = []
    for value in ids:
        try:
            valid.append(uuid.UUID(value))
        except ValueError:
            continue
    readable = Note.objects.all() if getattr(viewer, "is_superuser", False) else Note.objects.visible_to(viewer)
    rows = readable.filter(pk__in=valid).values_list("pk", "content")
    return {str(pk): content for pk, content in rows}


def note_timeline(note: Note, viewer=None) -> list[TimelineEntry]:
    """The note's evolution history, oldest first, each step in words. The notes it refers to are
    shown by their content when ``viewer`` may see them (an operator sees every note), otherwise
    as "another note"."""
    visible = _referenced_notes(note, viewer) if viewer is not None else None
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
                by=actor_display(str(raw.get("by", ""))) if raw.get("by") else "",
                changes=[
                    FieldChange(_field_label(name), _as_text(name, pair[0], visible), _as_text(name, pair[1], visible))
                    for name, pair in changes.items()
                    if isinstance(pair, (list, tuple)) and len(pair) == 2
                ],
                details=[
                    (str(label), _as_text(key, raw[key], visible))
                    for key, label in DETAIL_LABELS.items()
                    if raw.get(key)
                ],
            )
        )
    return entries
