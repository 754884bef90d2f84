"""Story provenance on notes: every note born in a story turn carries ``source_type =
chat_story``, ``source_id = story-turn-017`` and the tag ``event:<事件名>``.

The runner gives the turn job that provenance (``remember.drafts.Provenance``), so
the pipeline creates each note with it (the event tag is named in
``remember.drafts``); this module deletes a story's notes for ``--fresh``.
"""
from __future__ import annotations

from django.db import transaction

from memory.models import Conversation, Note
from memory.services.notes import delete_note

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
