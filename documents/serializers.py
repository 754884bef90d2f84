from rest_framework import serializers

from documents.models import Document
from documents.reasons import reason_label


class DocumentSerializer(serializers.ModelSerializer):
    uploaded_by = serializers.CharField(source="uploaded_by.username", default=None, read_only=True)
    viewer_url = serializers.SerializerMethodField()
    reason = serializers.SerializerMethodField()

    class Meta:
        model = Document
        fields = ["id", "matter", "parent", "filename", "title", "kind", "sha256", "size_bytes", "status", "error",
                  "attempts", "page_count", "ocr_pages", "headers", "uploaded_by", "uploaded_at", "indexed_at",
                  "viewer_url", "reason"]
        read_only_fields = fields

    def get_reason(self, document: Document) -> str:
        """The failure reason in the reader's language (``error`` keeps it as stored)."""
        return reason_label(document.error)

    def get_viewer_url(self, document: Document) -> str:
        return f"/documents/{document.pk}/"
