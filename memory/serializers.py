"""API representations of notes (read-only; writes go through services)."""
from rest_framework import serializers

from memory.models import Note


class NoteSerializer(serializers.ModelSerializer):
    firm = serializers.CharField(source="firm.slug")
    matter = serializers.SerializerMethodField()
    owner = serializers.SerializerMethodField()

    class Meta:
        model = Note
        fields = [
            "id",
            "firm",
            "content",
            "memory_scope",
            "category",
            "memory_type",
            "keywords",
            "tags",
            "context",
            "importance",
            "confidence",
            "mention_count",
            "matter",
            "owner",
            "conversation_id",
            "subject",
            "source_type",
            "source_id",
            "source_message_ids",
            "speaker",
            "said_at",
            "stored_at",
            "updated_at",
            "status",
            "valid_from",
            "valid_to",
            "superseded_by_id",
            "evolution_history",
        ]
        read_only_fields = fields

    def get_matter(self, note: Note) -> dict | None:
        if note.matter is None:
            return None
        return {"id": note.matter_id, "title": note.matter.title, "reference": note.matter.reference}

    def get_owner(self, note: Note) -> str | None:
        return note.owner.get_username() if note.owner else None
