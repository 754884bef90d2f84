"""Chat REST API: conversations and their messages (for page reloads and other clients)."""
from __future__ import annotations

from django.http import Http404
from rest_framework import generics
from rest_framework.request import Request
from rest_framework.response import Response

from chat.selectors import conversations_of, messages_of, recalled_as_seen_by
from chat.serializers import ConversationSerializer, MessageSerializer
from infra.http_input import BoundedLimitOffsetPagination
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
    """Every message of one conversation in order, with status, engine, timings and, for each
    reply, the memories recalled for it (only those the reader may still see)."""

    serializer_class = MessageSerializer
    pagination_class = MessagePagination

    def get_queryset(self):
        try:
            return messages_of(self.request.user, self.kwargs["conversation_id"])
        except Conversation.DoesNotExist:
            raise Http404 from None

    def list(self, request: Request, *args, **kwargs) -> Response:
        page = self.paginate_queryset(self.get_queryset())
        context = {**self.get_serializer_context(), "recalled": recalled_as_seen_by(request.user, page)}
        return self.get_paginated_response(MessageSerializer(page, many=True, context=context).data)
