"""What of a note's provenance a viewer is shown (docs/memory-model.md "Who sees what of a note's provenance").

Firm-wide knowledge may be shared: a note in a firm-wide layer drawn from a colleague's
*private* conversation (one without a matter) is visible to the whole firm. The traces of that
conversation are not: its id, the ids of its messages, the note's ``source_id`` (``turn:…``,
``conv-1:m1-m2``, ``story-turn-017``), its ``event:…`` tags and the provenance details of its
history. They are shown only to the conversation's owner (the note's owner) and to the firm's
auditors — superusers and staff firm admins of the note's firm, who read everything in admin.

One rule (``hides_private_trace``), applied where notes leave the server: the notes API and
search hits (``my_memory.serializers``), the chat's ``recalled`` frame (``chat.turns``) and the
navigation graph's trace and event list (``navigation``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from memory.labels import EVENT_TAG_PREFIX
from memory.models import Membership, Role

# Part of the key of anything cached from what a viewer is shown (the navigation graph's stored
# snapshots): changing the rule changes the key, so nothing shown under an older rule is reused.
DISCLOSURE_RULE = "private-trace-1"

# Provenance fields emptied for a viewer who may not see the private conversation's traces.
PRIVATE_TRACE_FIELDS = ("conversation_id", "source_id", "source_message_ids")


class NoteProvenance(Protocol):
    firm_id: int
    matter_id: int | None
    owner_id: int | None
    conversation_id: int | None


@dataclass(frozen=True)
class ProvenanceRef:
    """The four fields ``hides_private_trace`` reads, for callers holding a row, not a Note."""

    firm_id: int
    matter_id: int | None
    owner_id: int | None
    conversation_id: int | None


@dataclass(frozen=True)
class Viewer:
    """Who is looking, read once per request: their id and the firms they audit."""

    user_id: int | None
    superuser: bool
    audited_firm_ids: frozenset[int]


def viewer_of(user) -> Viewer:
    if user is None or not user.is_authenticated:
        return Viewer(None, False, frozenset())
    audited = frozenset()
    if user.is_staff:
        audited = frozenset(
            Membership.objects.filter(user=user, role=Role.ADMIN).values_list("firm_id", flat=True)
        )
    return Viewer(user.pk, user.is_superuser, audited)


def hides_private_trace(note: NoteProvenance, viewer: Viewer) -> bool:
    """True when ``note`` came from someone else's private conversation and ``viewer`` is neither
    its owner nor an auditor of its firm."""
    if note.conversation_id is None or note.matter_id is not None:
        return False  # not from a conversation, or from a matter's (everyone who sees it is assigned)
    if viewer.superuser or note.firm_id in viewer.audited_firm_ids:
        return False
    return note.owner_id != viewer.user_id


def shown_tags(tags: list[str], hidden: bool) -> list[str]:
    """The note's tags without its ``event:…`` tags when its trace is hidden."""
    return [tag for tag in tags if not tag.startswith(EVENT_TAG_PREFIX)] if hidden else list(tags)


def shown_history(history: list[dict[str, Any]], hidden: bool) -> list[dict[str, Any]]:
    """Each evolution step's time, kind and changed values, without provenance details."""
    if not hidden:
        return history
    shown = []
    for step in history:
        changes = {
            name: ([shown_tags(value, True) if isinstance(value, list) else value for value in values]
                   if name == "tags" else values)
            for name, values in (step.get("changes") or {}).items()
            if name not in PRIVATE_TRACE_FIELDS
        }
        shown.append({"at": step.get("at"), "event": step.get("event"), "changes": changes})
    return shown


def redact_note_payload(payload: dict[str, Any], note: NoteProvenance, viewer: Viewer) -> dict[str, Any]:
    """``payload`` (a serialized note) with the private conversation's traces removed when
    ``viewer`` may not see them; unchanged otherwise."""
    if not hides_private_trace(note, viewer):
        return {**payload, "provenance_hidden": False}
    redacted = dict(payload)
    for name, empty in (("conversation_id", None), ("source_id", ""), ("source_message_ids", [])):
        if name in redacted:
            redacted[name] = empty
    if "tags" in redacted:
        redacted["tags"] = shown_tags(redacted["tags"], True)
    if "evolution_history" in redacted:
        redacted["evolution_history"] = shown_history(redacted["evolution_history"], True)
    if "event" in redacted:
        redacted["event"] = ""
    redacted["provenance_hidden"] = True
    return redacted
