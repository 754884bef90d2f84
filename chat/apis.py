"""Chat REST API: conversations and their messages (for page reloads and other clients)."""
from __future__ import annotations

from django.http import Http404
from rest_framework import generics

from chat.selectors import conversations_of, messages_of
from chat.serializers import ConversationSerializer, MessageSerializer
from memory.http_input import BoundedLimitOffsetPagination
from memory.models import Conversation


class ConversationListApi(generics.ListAPIView):
    """The user's own conversations, most recent first."""

    serializer_class = ConversationSerializer

    def get_queryset(self):
        return conversations_of(self.request.user)


class MessagePagination(BoundedLimitOffsetPagination):
    default_limit = 500
    max_limit = 2000


class ConversationMessagesApi(generics.ListAPIView):
    """Every message of one conversation in order, with status, engine, timings and recalled notes."""

    serializer_class = MessageSerializer
    pagination_class = MessagePagination

    def get_queryset(self):
        try:
            return messages_of(self.request.user, self.kwargs["conversation_id"])
        except Conversation.DoesNotExist:
            raise Http404 from None
