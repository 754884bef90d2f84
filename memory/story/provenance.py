"""Story provenance on notes: every note born in a story turn carries ``source_type =
chat_story``, ``source_id = story-turn-017`` and the tag ``event:<事件名>``.

The write path names its sources after its own jobs (``turn:<pk>``, ``persona:<trait>``,
``consolidation:<pk>``) and ``correct_note`` refuses provenance fields, so the story stamps
its notes here: one transaction, a history entry on the note and an audit entry with the
before and after state.
"""
from __future__ import annotations

from django.db import transaction

from memory.models import AuditEvent, Conversation, Note, SourceType
from memory.services.audit import actor_label, record_note_event
from memory.services.notes import delete_note

EVENT_TAG_PREFIX = "event:"


def event_tag(event_name: str) -> str:
    """The tag the graph page filters by: ``event:电脑花屏``."""
    return f"{EVENT_TAG_PREFIX}{event_name}"


def stamp_story_note(note: Note, *, event: str, source_id: str, actor, reason: str = "") -> Note:
    """Give a note its story provenance (source type and id, event tag); audited.
    A note already stamped keeps its first stamp (the turn it was born in)."""
    with transaction.atomic():
        note = Note.objects.select_for_update().get(pk=note.pk)
        if note.source_type == SourceType.CHAT_STORY and note.source_id.startswith("story-"):
            return note
        before = note.snapshot()
        tags = [t for t in note.tags if not t.startswith(EVENT_TAG_PREFIX)] + [event_tag(event)]
        changes = {
            "source_type": [note.source_type, SourceType.CHAT_STORY],
            "source_id": [note.source_id, source_id],
            "tags": [list(note.tags), tags],
        }
        note.source_type, note.source_id, note.tags = SourceType.CHAT_STORY, source_id[:200], tags
        note.append_history("story_provenance", changes, by=actor_label(actor), pipeline_source=before["source_id"])
        note.save(update_fields=["source_type", "source_id", "tags", "evolution_history", "updated_at"])
        record_note_event(
            actor=actor, event=AuditEvent.NOTE_UPDATED, note=note, before=before, after=note.snapshot(),
            reason=reason or f"story provenance: {source_id}, event {event}",
        )
    return note


def delete_story_notes(conversations: list[Conversation], *, actor) -> int:
    """Delete every note of the given story conversations through the audited service
    (``--fresh``); raw messages stay, as they always do. Returns how many were deleted."""
    deleted = 0
    with transaction.atomic():  # all of the story's notes or none
        # Newest first: a successor goes before the note it superseded.
        for note in Note.objects.filter(conversation__in=conversations).order_by("-stored_at"):
            delete_note(note, actor=actor, reason="generate_story --fresh: the story is run again")
            deleted += 1
    return deleted
