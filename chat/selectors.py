"""Reads for the chat page and API, always through the visibility rule."""
from __future__ import annotations

from django.db.models import QuerySet

from memory.http_input import MAX_DB_ID
from memory.models import Conversation, Matter, Message


def conversations_of(user) -> QuerySet[Conversation]:
    return Conversation.objects.visible_to(user).select_related("matter").order_by("-updated_at")


def messages_of(user, conversation_id: int) -> QuerySet[Message]:
    """The conversation's messages in order; raises Conversation.DoesNotExist when not visible."""
    if conversation_id > MAX_DB_ID:  # not an id PostgreSQL can hold: no such conversation
        raise Conversation.DoesNotExist
    conversation = Conversation.objects.visible_to(user).get(pk=conversation_id)
    return conversation.messages.order_by("said_at", "id")


def matters_for_picker(user) -> QuerySet[Matter]:
    return Matter.objects.assigned_to(user).select_related("firm").order_by("firm__name", "title")
