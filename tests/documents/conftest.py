"""Every document test keeps its files in a store of its own (the data folder's documents/)."""
from __future__ import annotations

import io

import pytest

from documents.models import Document
from documents.ingest import process_document, upload_document


@pytest.fixture(autouse=True)
def document_store(settings, tmp_path):
    settings.DOCUMENT_STORE_DIR = tmp_path / "documents"
    return settings.DOCUMENT_STORE_DIR


def add_document(matter, filename: str, content: bytes, *, actor="system:test") -> Document:
    """Upload through the real service and run the worker's job on it, as the worker would."""
    document = upload_document(actor=actor, matter=matter, stream=io.BytesIO(content), filename=filename)
    process_document(document.pk)
    document.refresh_from_db()
    return document
