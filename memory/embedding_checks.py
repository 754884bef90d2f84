"""Does the configured embedder fit the database? The width of ``memory_note.embedding`` and
the active ``EmbeddingGeneration`` against the backend (``/readyz``, ``check_embeddings``,
``reembed``). docs/operations.md, "Changing the embedding model"."""
from __future__ import annotations

from django.conf import settings
from django.db import connection

from infra.embeddings import (
    Embedder,
    EmbeddingBackendMismatch,
    EmbeddingDimensionMismatch,
    embedder_identity,
    get_embedder,
)
from memory.models import EmbeddingGeneration


def note_column_dimensions() -> int | None:
    """The width of ``memory_note.embedding`` as created in the database, or None if absent."""
    with connection.cursor() as cursor:
        cursor.execute(
            """
            SELECT a.atttypmod FROM pg_attribute a
            JOIN pg_class c ON c.oid = a.attrelid
            WHERE c.relname = 'memory_note' AND a.attname = 'embedding' AND NOT a.attisdropped
            """
        )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def check_dimensions(embedder: Embedder | None = None) -> int:
    """Raise EmbeddingDimensionMismatch unless the backend's vectors fit the note column, and
    EmbeddingBackendMismatch unless the backend is the one the active generation recorded
    (same width, other model: the vectors would not be comparable)."""
    embedder = embedder or get_embedder()
    column = note_column_dimensions()
    if column is not None and column != embedder.dimensions:
        raise EmbeddingDimensionMismatch(
            f"EMBEDDING_BACKEND={settings.EMBEDDING_BACKEND} gives {embedder.dimensions}-d vectors "
            f"but memory_note.embedding is vector({column}); keep the backend this database was "
            f"created with, or change it with `manage.py reembed` (docs/operations.md)"
        )
    active = EmbeddingGeneration.objects.active()
    if active is not None and active.identity != embedder_identity(embedder):
        raise EmbeddingBackendMismatch(
            f"the stored vectors were made by {active.identity}, but EMBEDDING_BACKEND is "
            f"{embedder_identity(embedder)}; keep {active.identity}, or change it with "
            f"`manage.py reembed` (docs/operations.md)"
        )
    return embedder.dimensions
