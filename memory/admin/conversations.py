"""Admin of raw conversations and their messages: read by operators (superusers) only."""
from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from memory.admin.base import WalledAdmin
from memory.models import Conversation, Message


@admin.register(Conversation)
class ConversationAdmin(WalledAdmin):
    """Raw conversations are read by operators only; firm admins see notes' source messages inline."""

    list_display = ("title", "firm", "user", "matter", "created_at")
    readonly_fields = ("firm", "user", "matter", "title", "external_id", "created_at")

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser


@admin.register(Message)
class MessageAdmin(ConversationAdmin):
    list_display = ("conversation", "role", "speaker", "status", "said_at")
    readonly_fields = ("conversation", "firm", "role", "speaker", "content", "status", "external_id", "said_at",
                       "embedding_model")
    exclude = ("embedding",)  # the vector is for search, not for reading
    search_fields = ("content",)
