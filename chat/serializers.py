from rest_framework import serializers

from memory.models import Conversation, Message


class ConversationSerializer(serializers.ModelSerializer):
    matter_title = serializers.CharField(source="matter.title", default=None)

    class Meta:
        model = Conversation
        fields = ["id", "title", "matter_id", "matter_title", "created_at", "updated_at"]
        read_only_fields = fields


class MessageSerializer(serializers.ModelSerializer):
    class Meta:
        model = Message
        fields = ["id", "role", "speaker", "content", "status", "said_at", "engine", "recalled", "timings", "error"]
        read_only_fields = fields
