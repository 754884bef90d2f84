from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class DocumentsConfig(AppConfig):
    """A matter's documents, whole: the models, reading the files (text layers, OCR, DOCX,
    e-mail), chunking, the worker's job and its takeover, the passage search, the upload page
    and API, the viewer and the file download (docs/documents.md)."""

    name = "documents"
    label = "documents"
    verbose_name = _("Documents")

    def ready(self) -> None:
        """Tell the audit trail how an auditor reads a document's entries (its title names it;
        a failure reason is said in the reader's language)."""
        from django.db.models import F

        from documents.models import Document
        from documents.reasons import reason_label
        from memory.audit_display import register_audited_type

        register_audited_type("document", Document, name=F("title"), value_words={"error": reason_label})
