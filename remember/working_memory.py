"""Working memory (docs/memory-model.md): the last N raw messages of a conversation in play,
and the ones not yet consolidated. Reads only: messages are written by
``memory.services.conversations`` and the overflow is consolidated by
``remember.services.consolidation``; messages are never deleted."""
from __future__ import annotations

from django.conf import settings
from django.db.models import QuerySet

from memory.models import Conversation, Message

# The last ``settings.WORKING_MEMORY_SIZE`` (20) messages of a conversation are in play; while more
# are unconsolidated, the oldest ``settings.CONSOLIDATION_BATCH`` (5) at a time move to long-term
# memory (AdaMem §3.1/§4.2; docs/memory-model.md).


def working_memory(conversation: Conversation, size: int | None = None) -> list[Message]:
    """The last ``size`` (``settings.WORKING_MEMORY_SIZE``, 20) messages, oldest first."""
    size = size or settings.WORKING_MEMORY_SIZE
    latest = list(Message.objects.filter(conversation=conversation).order_by("-said_at", "-id")[:size])
    return latest[::-1]


def unconsolidated(conversation: Conversation) -> QuerySet[Message]:
    """The conversation's messages still in working memory, oldest first."""
    return Message.objects.filter(conversation=conversation, consolidated__isnull=True).order_by("said_at", "id")


def overflow_limits() -> tuple[int, int]:
    """(working memory size, consolidation batch), read when a consolidation runs."""
    return settings.WORKING_MEMORY_SIZE, settings.CONSOLIDATION_BATCH
