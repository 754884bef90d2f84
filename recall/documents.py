"""Document chunks as a search source: keyword (BM25-like ts_rank over the chunk's terms) and
dense (cosine over its embedding) rankings of the chunks a user may see, fused by reciprocal
rank — the same raw floor as turns: a chunk that either ranking puts near the top is returned
whatever the other says (docs/documents.md, "Recall with citations").
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import F
from pgvector.django import CosineDistance

from infra.embeddings import get_embedder
from memory.models import DocumentChunk
from memory.models.conversations import SEARCH_CONFIG
from memory.models.documents import passage_url
from memory.segmentation import segment

#: Candidates read from each ranking before fusion, and the reciprocal-rank constant.
DOCUMENT_CANDIDATES = 40
DOCUMENT_RRF_K = 60
#: Query words used for the keyword ranking (the longest first).
DOCUMENT_QUERY_WORDS = 24


@dataclass(frozen=True)
class DocumentHit:
    """One passage of a document page: where it is (document, page, offsets in the page's text),
    what it says, how to cite it (《房屋租赁合同》第 3 页) and why it was found."""

    chunk_id: int
    document_id: int
    title: str
    page: int
    start: int
    end: int
    heading: str
    text: str
    score: float
    citation: str
    reasons: list[str] = field(default_factory=list)
    matter_id: int | None = None  # the document's matter (a token limited to matters narrows by it)

    @property
    def url(self) -> str:
        """The viewer at this page, the passage highlighted."""
        return passage_url(self.document_id, self.page, self.start, self.end)

    def payload(self) -> dict:
        return {
            "kind": "document", "chunk_id": self.chunk_id, "document_id": self.document_id,
            "matter_id": self.matter_id, "title": self.title, "page": self.page, "start": self.start,
            "end": self.end, "heading": self.heading, "text": self.text, "score": round(self.score, 6),
            "citation": self.citation, "reasons": self.reasons, "url": self.url,
        }


def search_documents(
    user, query: str, *, matter_id: int | None = None, limit: int = 10, vector: np.ndarray | None = None,
) -> list[DocumentHit]:
    """The chunks best matching the query among those the user may see (optionally one matter's).

    ``vector`` is the query's embedding when the caller already has it (``search_memory``'s),
    so the query is not encoded twice; without it the query is encoded here."""
    query = (query or "").strip()
    if not query:
        return []
    chunks = DocumentChunk.objects.visible_to(user)
    if matter_id is not None:
        chunks = chunks.filter(matter_id=matter_id)
    keyword = _keyword_ids(chunks, query)
    dense = _dense_ids(chunks, query, vector)
    scores: dict[int, float] = {}
    reasons: dict[int, list[str]] = {}
    for name, ranking in (("keyword", keyword), ("dense", dense)):
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (DOCUMENT_RRF_K + rank)
            reasons.setdefault(chunk_id, []).append(f"{name} #{rank}")
    best = sorted(scores, key=lambda chunk_id: -scores[chunk_id])[:limit]
    rows = {c.pk: c for c in DocumentChunk.objects.filter(pk__in=best).select_related("document", "page")}
    return [
        DocumentHit(
            chunk_id=c.pk, document_id=c.document_id, title=c.document.title, page=c.page.number,
            start=c.start, end=c.end, heading=c.heading, text=c.text, score=scores[c.pk],
            citation=c.document.citation(c.page.number), reasons=reasons[c.pk], matter_id=c.matter_id,
        )
        for c in (rows[chunk_id] for chunk_id in best if chunk_id in rows)
    ]


def _keyword_ids(chunks, query: str) -> list[int]:
    words = sorted(set(segment(query)), key=len, reverse=True)[:DOCUMENT_QUERY_WORDS]
    if not words:
        return []
    combined = None
    for word in words:
        one = SearchQuery(word, config=SEARCH_CONFIG, search_type="plain")
        combined = one if combined is None else combined | one
    return list(
        chunks.filter(search_vector=combined)
        .annotate(rank=SearchRank(F("search_vector"), combined))
        .order_by("-rank", "id").values_list("id", flat=True)[:DOCUMENT_CANDIDATES]
    )


def _dense_ids(chunks, query: str, vector: np.ndarray | None = None) -> list[int]:
    if vector is None:
        vector = get_embedder().embed_query(query)
    return list(
        chunks.filter(embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", list(map(float, vector))))
        .order_by("distance", "id").values_list("id", flat=True)[:DOCUMENT_CANDIDATES]
    )
