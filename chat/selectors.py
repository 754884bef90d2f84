"""Reads for the chat page and API, always through the visibility rule."""
from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet

from infra.http_input import MAX_DB_ID
from memory.models import Conversation, Matter, Message, Note
from documents.models import DocumentChunk
from recall import note_page_url

MESSAGE_ID_PREFIX = "message:"
# What search reads and a page never shows: the vector alone is kilobytes per message.
MESSAGE_SEARCH_FIELDS = ("embedding", "search_text", "search_vector")
# What showing a saved recalled note needs of the note as it is now (not its vector).
# A saved memory is shown again while its note is current or superseded by a newer version;
# a note in any other state (forgotten, erased …) or deleted is left out with its saved copy.
SHOWN_AGAIN_STATUSES = (Note.Status.ACTIVE, Note.Status.SUPERSEDED)
NOTE_SHOWN_FIELDS = ("id", "content", "status", "memory_scope", "category", "source_type", "source_id", "matter_id")


def conversations_of(user) -> QuerySet[Conversation]:
    return Conversation.objects.visible_to(user).select_related("matter").order_by("-updated_at", "-id")


def messages_of(user, conversation_id: int) -> QuerySet[Message]:
    """The conversation's messages in order; raises Conversation.DoesNotExist when not visible."""
    if conversation_id > MAX_DB_ID:  # not an id PostgreSQL can hold: no such conversation
        raise Conversation.DoesNotExist
    conversation = Conversation.objects.visible_to(user).get(pk=conversation_id)
    return conversation.messages.order_by("said_at", "id").defer(*MESSAGE_SEARCH_FIELDS)


def matters_for_picker(user) -> QuerySet[Matter]:
    """Assigned matters by reference (M-001 first), then title; the firm groups them first."""
    return Matter.objects.assigned_to(user).select_related("firm").order_by("firm__name", "reference", "title", "pk")


def _note_uuid(entry: dict[str, Any]) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(entry.get("id")))
    except ValueError:
        return None


def _message_pk(entry: dict[str, Any]) -> int | None:
    raw = entry.get("message_id") or str(entry.get("id", "")).removeprefix(MESSAGE_ID_PREFIX)
    try:
        return int(raw)
    except (TypeError, ValueError):
        return None


def _is_document(entry: dict[str, Any]) -> bool:
    return entry.get("kind") == "document"


def _is_message(entry: dict[str, Any]) -> bool:
    return entry.get("kind") == "message" or str(entry.get("id", "")).startswith(MESSAGE_ID_PREFIX)


def _note_payload(entry: dict[str, Any], note: Note) -> dict[str, Any]:
    """The entry as saved with the reply; an entry saved before the snapshot (id, layer, score
    only) is filled from the note as it is now. ``changed``: the note was edited or superseded since."""
    shown = dict(entry)
    if "content" not in shown:
        shown.update({
            "kind": "note", "content": note.content, "layer_label": note.get_memory_scope_display(),
            "category": note.category, "category_label": note.get_category_display(),
            "source_type": note.source_type, "source_id": note.source_id, "matter_id": note.matter_id,
            "reasons": [],
        })
    # the note's page for people (replies saved before it pointed to the API's browsable view)
    shown["provenance_url"] = note_page_url(note.pk)
    shown["changed"] = shown["content"] != note.content or note.status != Note.Status.ACTIVE
    return shown


def recalled_as_seen_by(user, messages: Sequence[Message]) -> dict[int, list[dict[str, Any]]]:
    """Each reply's saved recalled memories, keeping only what ``user`` may still see now: a note
    behind a wall they left, or a message of a conversation no longer theirs, is left out."""
    entries = [entry for message in messages for entry in (message.recalled or []) if isinstance(entry, dict)]
    note_ids = {pk for entry in entries if not _is_message(entry) and not _is_document(entry)
                and (pk := _note_uuid(entry))}
    chunk_ids = {entry.get("chunk_id") for entry in entries if _is_document(entry)}
    visible_chunks = (
        set(DocumentChunk.objects.visible_to(user).filter(pk__in=chunk_ids).values_list("pk", flat=True))
        if chunk_ids else set()
    )
    # the other notes of the contradictions shown with a note: kept only while the user sees them
    contradicting = {pk for entry in entries if not _is_message(entry)
                     for other in entry.get("contradictions") or [] if isinstance(other, dict)
                     and (pk := _note_uuid(other))}
    still_seen = (
        set(Note.objects.visible_to(user).filter(pk__in=contradicting).values_list("pk", flat=True))
        if contradicting else set()
    )
    message_ids = {pk for entry in entries if _is_message(entry) and (pk := _message_pk(entry))}
    notes = (
        {note.pk: note for note in Note.objects.visible_to(user)
         .filter(pk__in=note_ids, status__in=SHOWN_AGAIN_STATUSES).only(*NOTE_SHOWN_FIELDS)}
        if note_ids else {}
    )
    visible_messages = (
        set(Message.objects.visible_to(user).filter(pk__in=message_ids).values_list("pk", flat=True))
        if message_ids else set()
    )
    shown: dict[int, list[dict[str, Any]]] = {}
    for message in messages:
        kept = []
        for entry in message.recalled or []:
            if not isinstance(entry, dict):
                continue
            if _is_document(entry):
                if entry.get("chunk_id") in visible_chunks:
                    kept.append(entry)
            elif _is_message(entry):
                if _message_pk(entry) in visible_messages and "content" in entry:
                    kept.append(entry)
            elif (note := notes.get(_note_uuid(entry))) is not None:
                shown_entry = _note_payload(entry, note)
                if shown_entry.get("contradictions"):
                    shown_entry["contradictions"] = [other for other in shown_entry["contradictions"]
                                                     if isinstance(other, dict) and _note_uuid(other) in still_seen]
                kept.append(shown_entry)
        shown[message.pk] = kept
    return shown
