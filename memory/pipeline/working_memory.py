"""Working memory (docs/memory-model.md): raw messages, the last N of a conversation in play,
the overflow consolidated into long-term memory in batches. Messages are never deleted:
consolidated ones stay archived and searchable (``Message.search_text``)."""
from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory.models import ConsolidatedMessage, Consolidation, Conversation, Message, TurnExtraction
from memory.segmentation import search_text

logger = logging.getLogger("legalmem.pipeline")


class MessageError(ValueError):
    """A message that cannot be stored (unknown role, empty content, wrong conversation)."""


def _storable(text: str) -> str:
    """PostgreSQL text cannot hold NUL; lone surrogates cannot be encoded. Everything else is
    kept as said (newlines, tabs, emoji): the raw message is the evidence."""
    text = text.replace("\x00", "")
    return text.encode("utf-8", "replace").decode("utf-8") if any(0xD800 <= ord(c) <= 0xDFFF for c in text) else text


def save_message(
    conversation: Conversation,
    role: str,
    content: str,
    *,
    speaker: str,
    said_at: datetime | None = None,
    status: str = Message.Status.COMPLETE,
    external_id: str = "",
) -> Message:
    """Store one raw message with its segmented search text. With an ``external_id`` already
    stored in this conversation the existing message is returned (idempotent import)."""
    if role not in Message.Role.values:
        raise MessageError(f"unknown role {role!r}; expected one of {', '.join(Message.Role.values)}")
    if status not in Message.Status.values:
        raise MessageError(f"unknown status {status!r}")
    if not isinstance(content, str):
        raise MessageError("message content must be text")
    content = _storable(content)
    if external_id:
        found = Message.objects.filter(conversation=conversation, external_id=external_id).first()
        if found is not None:
            return found
    try:
        with transaction.atomic():
            message = Message.objects.create(
                conversation=conversation,
                firm_id=conversation.firm_id,
                role=role,
                speaker=(speaker or role)[:200],
                content=content,
                status=status,
                external_id=external_id[:200],
                said_at=said_at or timezone.now(),
                search_text=search_text(content),
            )
            Conversation.objects.filter(pk=conversation.pk).update(updated_at=timezone.now())
    except IntegrityError:
        if not external_id:
            raise
        return Message.objects.get(conversation=conversation, external_id=external_id)
    return message


def working_memory(conversation: Conversation, size: int | None = None) -> list[Message]:
    """The last ``size`` (``WORKING_MEMORY_SIZE``, 20) messages, oldest first."""
    size = size or settings.WORKING_MEMORY_SIZE
    latest = list(Message.objects.filter(conversation=conversation).order_by("-said_at", "-id")[:size])
    return latest[::-1]


def unconsolidated(conversation: Conversation):
    return Message.objects.filter(conversation=conversation, consolidated__isnull=True).order_by("said_at", "id")


def consolidate_overflow(conversation: Conversation, *, actor) -> list[Consolidation]:
    """While more than N messages are unconsolidated, move the oldest batch (5) out of working
    memory. Messages whose turn was already extracted are only archived; the rest (a question
    never answered, a cancelled reply…) go through the same extraction first, so nothing said
    is lost to long-term memory. Returns the consolidations made."""
    from memory.pipeline.turns import process_batch  # the pipeline uses working memory, not the reverse

    made: list[Consolidation] = []
    size, batch = settings.WORKING_MEMORY_SIZE, settings.CONSOLIDATION_BATCH
    while unconsolidated(conversation).count() > size:
        oldest = list(unconsolidated(conversation)[:batch])
        turns = TurnExtraction.objects.filter(conversation=conversation)
        extracted = set(turns.values_list("user_message_id", flat=True)) | set(
            turns.values_list("assistant_message_id", flat=True)
        )
        leftover = [m for m in oldest if m.pk not in extracted and m.status == Message.Status.COMPLETE]
        consolidation = Consolidation.objects.create(firm_id=conversation.firm_id, conversation=conversation)
        if leftover:
            process_batch(consolidation, leftover, actor=actor)  # may raise: nothing is marked then
        with transaction.atomic():
            for message in oldest:
                ConsolidatedMessage.objects.get_or_create(message=message, defaults={"consolidation": consolidation})
        made.append(consolidation)
    return made
