"""A matter's documents into memory: upload, extraction (text layers, OCR, DOCX, e-mail, text),
chunking with page offsets, keyword terms and embeddings, in the worker (docs/documents.md)."""
from remember.documents.ingest import (
    DocumentRejected,
    enqueue_document,
    process_document,
    restore_document,
    retry_document,
    upload_document,
)

__all__ = ["DocumentRejected", "enqueue_document", "process_document", "restore_document", "retry_document",
           "upload_document"]
