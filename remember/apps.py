from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RememberConfig(AppConfig):
    """The write path's management commands and background tasks, and the notes a document
    yields; no models (they live in ``memory`` and ``documents``)."""

    name = "remember"
    label = "remember"
    verbose_name = _("Write path")

    def ready(self) -> None:
        """Read every document the worker indexes into notes (``documents.ingest``'s registry)."""
        from documents.ingest import register_note_writer
        from remember.documents import remember_document

        register_note_writer(remember_document)
