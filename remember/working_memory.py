"""Working memory (docs/memory-model.md): the last N raw messages of a conversation in play,
and the ones not yet consolidated. Reads only: messages are written by
``memory.services.conversations`` and the overflow is consolidated by
``remember.consolidation``; messages are never deleted."""
from __future__ import annotations

from django.conf import settings
from django.db.models import QuerySet

from memory.models import Conversation, Message


def working_memory(conversation: Conversation, size: int | None = None) -> list[Message]:
    """The last ``size`` (``WORKING_MEMORY_SIZE``, 20) messages, oldest first."""
    size = size or settings.WORKING_MEMORY_SIZE
    latest = list(Message.objects.filter(conversation=conversation).order_by("-said_at", "-id")[:size])
    return latest[::-1]


def unconsolidated(conversation: Conversation) -> QuerySet[Message]:
    """The conversation's messages still in working memory, oldest first."""
    return Message.objects.filter(conversation=conversation, consolidated__isnull=True).order_by("said_at", "id")
