"""Writing working-memory consolidations (``Consolidation``, ``ConsolidatedMessage``): the
oldest messages of a conversation leaving working memory, and what their extraction found.
Bookkeeping of the write path (the notes it makes are audited through the notes services)."""
from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from memory.models import ConsolidatedMessage, Consolidation, Conversation, Message


def consolidation_create(*, conversation: Conversation) -> Consolidation:
    with transaction.atomic(savepoint=False):
        return Consolidation.objects.create(firm_id=conversation.firm_id, conversation=conversation)


def consolidation_save(consolidation: Consolidation, fields: Iterable[str]) -> None:
    """Store these fields of the consolidation as set on it."""
    with transaction.atomic(savepoint=False):
        consolidation.save(update_fields=list(fields))


def consolidated_messages_mark(messages: Iterable[Message], consolidation: Consolidation) -> None:
    """Mark the messages as consolidated by ``consolidation`` (a message marked before keeps its mark)."""
    with transaction.atomic():
        for message in messages:
            ConsolidatedMessage.objects.get_or_create(message=message, defaults={"consolidation": consolidation})
