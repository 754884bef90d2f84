"""Document chunks as a search source: keyword (BM25-like ts_rank over the chunk's terms) and
dense (cosine over its embedding) rankings of the chunks a user may see, fused by reciprocal
rank — the same raw floor as turns: a chunk that either ranking puts near the top is returned
whatever the other says (docs/documents.md, "Recall with citations").
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from django.core.exceptions import EmptyResultSet, ImproperlyConfigured
from django.db import connection
from django.utils.translation import gettext, gettext_lazy

from infra.embeddings import get_embedder
from documents.models import DocumentChunk
from memory.models.conversations import SEARCH_CONFIG
from memory.models.notes import passage_url
from memory.segmentation import segment
from infra.embeddings.literals import vector_literal

#: Candidates read from each ranking before fusion, and the reciprocal-rank constant.
DOCUMENT_CANDIDATES = 40
DOCUMENT_RRF_K = 60
#: Query words used for the keyword ranking (the longest first).
DOCUMENT_QUERY_WORDS = 24
#: What a reader sees of the two rankings (translated: locale/*/LC_MESSAGES/django.po).
RANKING_LABELS = {"keyword": gettext_lazy("keywords of the document"),
                  "dense": gettext_lazy("meaning of the document")}


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
    ranks: dict[str, int] = field(default_factory=dict)  # what it was ranked by: "keyword" / "dense" -> rank

    @property
    def url(self) -> str:
        """The viewer at this page, the passage highlighted."""
        return passage_url(self.document_id, self.page, self.start, self.end)

    def payload(self) -> dict:
        return {
            "kind": "document", "chunk_id": self.chunk_id, "document_id": self.document_id,
            "matter_id": self.matter_id, "title": self.title, "page": self.page, "start": self.start,
            "end": self.end, "heading": self.heading, "text": self.text, "score": round(self.score, 6),
            "citation": self.citation, "reasons": self.reasons, "ranks": self.ranks, "url": self.url,
        }


def search_documents(
    user, query: str, *, matter_id: int | None = None, limit: int = 10, vector: np.ndarray | None = None,
    matter_ids: Sequence[int] | None = None,
) -> list[DocumentHit]:
    """The chunks best matching the query among those the user may see (optionally one matter's).

    ``vector`` is the query's embedding when the caller already has it (``search_memory``'s),
    so the query is not encoded twice; without it the query is encoded here. ``matter_ids``: the
    user's matters just read (``recall``'s ``reach_of``), given to ``visible_to`` as literals."""
    query = (query or "").strip()
    if not query:
        return []
    keyword, dense = document_rankings(user, query, matter_id=matter_id, vector=vector, matter_ids=matter_ids)
    scores: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, ranking in (("keyword", keyword), ("dense", dense)):
        for rank, chunk_id in enumerate(ranking, start=1):
            scores[chunk_id] = scores.get(chunk_id, 0.0) + 1.0 / (DOCUMENT_RRF_K + rank)
            ranks.setdefault(chunk_id, {})[name] = rank
    best = sorted(scores, key=lambda chunk_id: -scores[chunk_id])[:limit]
    if not best:
        return []
    rows = {c.pk: c for c in DocumentChunk.objects.filter(pk__in=best).select_related("document", "page")}
    return [
        DocumentHit(
            chunk_id=c.pk, document_id=c.document_id, title=c.document.title, page=c.page.number,
            start=c.start, end=c.end, heading=c.heading, text=c.text, score=scores[c.pk],
            citation=c.document.citation(c.page.number), reasons=rank_reasons(ranks[c.pk]), matter_id=c.matter_id,
            ranks=ranks[c.pk],
        )
        for c in (rows[chunk_id] for chunk_id in best if chunk_id in rows)
    ]


def rank_reasons(ranks: dict[str, int]) -> list[str]:
    """A passage's ranks in words, in the active language ("文件关键词：第 1 名"), never "keyword #1"."""
    return [gettext("%(list)s: no. %(rank)d") % {"list": RANKING_LABELS[name], "rank": rank}
            for name, rank in ranks.items()]


def document_rankings(
    user, query: str, *, matter_id: int | None = None, vector: np.ndarray | None = None,
    matter_ids: Sequence[int] | None = None,
) -> tuple[list[int], list[int]]:
    """The keyword ranking (``ts_rank`` over the query's longest words, any of them) and the
    dense ranking (cosine) of the chunks ``user`` may see, ``DOCUMENT_CANDIDATES`` each, read in
    ONE statement with the visibility rule compiled in: as two ORM queries they cost 14.6 ms
    (mostly Python building them, on the cores the search shares), as this one 1.9 ms
    (docs/performance.md)."""
    chunks = DocumentChunk.objects.visible_to(user, matter_ids=matter_ids)
    if matter_id is not None:
        chunks = chunks.filter(matter_id=matter_id)
    rule = chunks.query
    try:
        visible_sql, visible_params = rule.get_compiler(using=chunks.db).compile(rule.where)
    except EmptyResultSet:
        return [], []  # sees no matter: no chunk
    if len([alias for alias, refcount in rule.alias_refcount.items() if refcount]) > 1:
        raise ImproperlyConfigured("DocumentChunk.visible_to must not need a join: it is pasted into raw SQL")
    if vector is None:
        vector = get_embedder().embed_query(query)
    words = sorted(set(segment(query)), key=len, reverse=True)[:DOCUMENT_QUERY_WORDS]
    parts, params = [], []
    if words:
        # Each word's lexemes ANDed (plainto_tsquery), the words ORed: a chunk holding any word.
        tsquery = "(" + " || ".join([f"plainto_tsquery('{SEARCH_CONFIG}'::regconfig, %s)"] * len(words)) + ")"
        parts.append(
            f"(SELECT 0, id, ts_rank(search_vector, q.q) AS score FROM {DocumentChunk._meta.db_table}, "
            f"(SELECT {tsquery} AS q) q WHERE ({visible_sql}) AND search_vector @@ q.q "
            f"ORDER BY score DESC, id LIMIT %s)"
        )
        params += [*words, *visible_params, DOCUMENT_CANDIDATES]
    parts.append(
        f"(SELECT 1, id, embedding <=> %s::vector AS score FROM {DocumentChunk._meta.db_table} "
        f"WHERE ({visible_sql}) AND embedding IS NOT NULL ORDER BY score, id LIMIT %s)"
    )
    params += [vector_literal(vector), *visible_params, DOCUMENT_CANDIDATES]
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        rows = cursor.fetchall()
    keyword = sorted(((-score, chunk_id) for source, chunk_id, score in rows if source == 0))
    dense = sorted(((score, chunk_id) for source, chunk_id, score in rows if source == 1))
    return [chunk_id for _, chunk_id in keyword], [chunk_id for _, chunk_id in dense]
