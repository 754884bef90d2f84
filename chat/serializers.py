from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from memory.models import Conversation, Message


class ConversationSerializer(serializers.ModelSerializer):
    matter_title = serializers.CharField(source="matter.title", default=None)
    matter_reference = serializers.CharField(source="matter.reference", default=None)

    class Meta:
        model = Conversation
        fields = ["id", "title", "matter_id", "matter_title", "matter_reference", "created_at", "updated_at"]
        read_only_fields = fields


class MessageSerializer(serializers.ModelSerializer):
    """A message; ``recalled``: the memories saved with a reply that the reader may still see
    (``context["recalled"]``, from ``chat.selectors.recalled_as_seen_by``), ``recall_plan`` their plan."""

    recalled = serializers.SerializerMethodField()
    citations = serializers.SerializerMethodField()

    class Meta:
        model = Message
        fields = ["id", "role", "speaker", "content", "status", "said_at", "engine", "recalled", "recall_plan",
                  "citations", "timings", "error"]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.DictField()))
    def get_recalled(self, message: Message) -> list[dict]:
        return self.context.get("recalled", {}).get(message.pk, [])

    @extend_schema_field(serializers.DictField())
    def get_citations(self, message: Message) -> dict:
        """The reply's checked citations (docs/citations.md), citing only sources the reader may
        still see: a source behind a wall they since left is no longer named."""
        citations = message.citations if isinstance(message.citations, dict) else {}
        if not citations:
            return {}
        seen = {entry.get("number") for entry in self.get_recalled(message) if isinstance(entry, dict)}
        return {**citations, "cited": [entry for entry in citations.get("cited") or []
                                       if isinstance(entry, dict) and entry.get("number") in seen]}
