"""Fusion: one explainable score per recalled note.

The formula (docs/read-path.md, Score; AdaMem's 70/15/10/5 split)::

    semantic  = clamp(1 - cosine_distance(query, note), 0, 1)
    keyword   = Σ idf(query words ∩ note words) / Σ idf(query words)  (jieba-segmented, function words
                dropped; idf: BM25's, over the raw messages the search reads — 1 each without them)
    relevance = 0.75 · semantic + 0.25 · keyword                    ("semantic" share of the 70 %)
    graph     = graph relatedness from expansion ∈ [0, 1]           (0 when expansion is not planned)
    recency   = 0.5 ** (age_days / 30)                              (age from said_at, else stored_at)
    support   = 0.5 · importance + 0.5 · confidence                 (AdaMem "fact support")
    fused     = 0.70 · relevance + 0.15 · graph + 0.10 · recency + 0.05 · support
    total     = fused · layer_weight                                 (plan priority: 1.0, 0.97, 0.94, …)

A raw message is scored by the same formula (shown in its breakdown; the layered search then
orders notes and messages by rank fusion, ``recall.fusion``): its keyword
term is IDF-weighted (share of the query words' BM25 IDF it holds; a name said in hundreds of
lines weighs little), it has no graph term, and its support is a neutral 0.5 (a raw line has
no importance or confidence of its own). A message not embedded yet has relevance = keyword.

``breakdown`` reports each term (and the weights) so a client can show why a note was recalled.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from datetime import datetime

from django.utils import timezone

from memory.models import Message, Note
from recall.keywords import term, text_terms

W_RELEVANCE = 0.70
W_GRAPH = 0.15
W_RECENCY = 0.10
W_SUPPORT = 0.05
SEMANTIC_SHARE = 0.75
KEYWORD_SHARE = 0.25
RECENCY_HALF_LIFE_DAYS = 30.0
WEIGHTS = {
    "relevance": W_RELEVANCE,
    "graph": W_GRAPH,
    "recency": W_RECENCY,
    "support": W_SUPPORT,
    "semantic_share_of_relevance": SEMANTIC_SHARE,
    "keyword_share_of_relevance": KEYWORD_SHARE,
}


@dataclass(frozen=True)
class ScoreBreakdown:
    semantic: float
    keyword: float
    importance: float
    confidence: float
    graph: float
    recency: float
    layer_weight: float
    total: float
    # Set by the layered strategy's rank fusion (``recall.fusion``): the score hits are
    # ordered by, and the slot's rank in each list (None: not in that list).
    fused: float | None = None
    dense_rank: int | None = None
    keyword_rank: int | None = None
    note_rank: int | None = None

    def as_dict(self) -> dict[str, float]:
        return asdict(self)


def semantic_score(distance: float | None) -> float:
    if distance is None or math.isnan(distance):
        return 0.0
    return min(1.0, max(0.0, 1.0 - distance))


MESSAGE_SUPPORT = 0.5


class QueryWords:
    """The query words folded once per search (``keywords.term``) with their weights: a search
    scores ~100 candidates against the same words, and folding them again per candidate cost
    more than the match itself."""

    __slots__ = ("weights", "total")

    def __init__(self, query_words: set[str], weights: dict[str, float] | None = None) -> None:
        self.weights = {term(word): (weights or {}).get(word, 1.0) for word in query_words}
        self.total = sum(self.weights.values()) or 1.0

    def share_in(self, search_text: str) -> float:
        """The (weighted) share of the query words the stored ``search_text`` holds."""
        if not self.weights:
            return 0.0
        held = text_terms(search_text)
        return sum(weight for folded, weight in self.weights.items() if folded in held) / self.total


def keyword_score(query_words: set[str], note_search_text: str, weights: dict[str, float] | None = None) -> float:
    """Share of the query words (English folded, see ``keywords.term``) found in the text; with
    ``weights`` (a query word -> its IDF over what was said) the IDF-weighted share, so a name the
    whole matter repeats weighs little next to the word that picks one fact out."""
    if not query_words:
        return 0.0
    return QueryWords(query_words, weights).share_in(note_search_text)


def recency_score(note: Note | Message, now: datetime | None = None) -> float:
    moment = note.said_at or getattr(note, "stored_at", None)
    if moment is None:
        return 0.0
    now = now or timezone.now()
    age_days = max(0.0, (now - moment).total_seconds() / 86400.0)
    return 0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS)


def score(
    note: Note,
    *,
    distance: float | None,
    query_words: QueryWords,
    graph: float = 0.0,
    layer_weight: float = 1.0,
    now: datetime | None = None,
) -> ScoreBreakdown:
    """The breakdown (and total) of one note for one query (its words folded once per search,
    with their weights: ``QueryWords``); see the module docstring."""
    semantic = semantic_score(distance)
    keyword = query_words.share_in(note.search_text)
    recency = recency_score(note, now)
    importance = float(note.importance)
    confidence = float(note.confidence)
    relevance = SEMANTIC_SHARE * semantic + KEYWORD_SHARE * keyword
    support = 0.5 * importance + 0.5 * confidence
    fused = W_RELEVANCE * relevance + W_GRAPH * graph + W_RECENCY * recency + W_SUPPORT * support
    return ScoreBreakdown(
        semantic=round(semantic, 4),
        keyword=round(keyword, 4),
        importance=round(importance, 4),
        confidence=round(confidence, 4),
        graph=round(graph, 4),
        recency=round(recency, 4),
        layer_weight=round(layer_weight, 4),
        total=round(fused * layer_weight, 6),
    )


def score_message(
    message: Message,
    *,
    distance: float | None,
    keyword: float,
    layer_weight: float,
    now: datetime | None = None,
) -> ScoreBreakdown:
    """The breakdown of one raw message (``keyword``: its IDF-weighted share, see the module docstring)."""
    semantic = semantic_score(distance)
    recency = recency_score(message, now)
    # Not embedded yet (the indexing job is behind): ranked by its keywords alone for now.
    relevance = keyword if distance is None else SEMANTIC_SHARE * semantic + KEYWORD_SHARE * keyword
    fused = W_RELEVANCE * relevance + W_RECENCY * recency + W_SUPPORT * MESSAGE_SUPPORT
    return ScoreBreakdown(
        semantic=round(semantic, 4),
        keyword=round(keyword, 4),
        importance=MESSAGE_SUPPORT,
        confidence=MESSAGE_SUPPORT,
        graph=0.0,
        recency=round(recency, 4),
        layer_weight=round(layer_weight, 4),
        total=round(fused * layer_weight, 6),
    )


def semantic_only(note: Note, distance: float | None) -> ScoreBreakdown:
    """The ``semantic`` strategy's breakdown: total = cosine similarity, nothing else counted."""
    semantic = semantic_score(distance)
    return ScoreBreakdown(
        semantic=round(semantic, 4),
        keyword=0.0,
        importance=round(float(note.importance), 4),
        confidence=round(float(note.confidence), 4),
        graph=0.0,
        recency=0.0,
        layer_weight=1.0,
        total=round(semantic, 6),
    )
