"""The ``layered_nav`` search strategy (docs/navigation.md, API): the graph route fused with vector search.

Candidates come from two places over the same visible notes: the ef results of the real
navigation trace (greedy descent + L0 beam) and the exact cosine top-N of the query encoder's
vector over the same embeddings (the graph is an explanation layer, not a replacement for the
vector index, so the vector side keeps recall). The union is ranked by the score the graph walk
itself uses, (1-λ)·cosine + λ·Jaccard(query words, note words); each hit says where each list
ranked it, so the page can show whether the graph route found it.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Iterable

import numpy as np
from django.utils.translation import gettext

from infra.embeddings import get_embedder
from memory.models import Matter, MemoryScope, Note
from memory.segmentation import segment
from recall import (
    DENSE, KEYWORD, MESSAGE, MESSAGE_LIMIT, MESSAGES, NOTE, NOTES, Entry, Hit, InvalidSearch, RawFloor, ScoreBreakdown,
    SearchResult, dense_ranking, fuse, fusion_reason, keyword_ranking, keyword_score, message_candidates,
    message_reasons, query_tokens, recency_score, score_message, select,
)
from navigation.graph import query_scorer, trace
from navigation.built import BuiltGraph
from navigation.freshness import current_graph
from navigation.selectors import GraphFilters, NavigationInputError, resolve_context
from navigation.serializers import GraphTrace, TraceSerializer

MAX_K = 100


@dataclass
class LayeredNavHit:
    note_id: str
    score: float
    similarity: float
    graph_rank: int | None
    vector_rank: int | None
    level: int
    memory_scope: str
    label: str


@dataclass
class LayeredNavResult:
    query: str
    k: int
    hits: list[LayeredNavHit] = field(default_factory=list)
    trace: dict[str, Any] = field(default_factory=dict)
    graph_version: str = ""


def _allowed(built: BuiltGraph, index: int, matter_id: int | None, scopes: set[str] | None) -> bool:
    info = built.info[index]
    if scopes and info.scope not in scopes:
        return False
    if matter_id is not None and info.matter_id not in (None, matter_id):
        return False
    return True


def layered_nav_search(user, query: str, *, k: int, matter_id: int | None = None,
                       scopes: Iterable[str] | None = None, conversation=None,
                       firm_id: int | None = None, query_vector: np.ndarray | None = None,
                       as_of: datetime | None = None) -> LayeredNavResult:
    """Search the user's visible notes with the navigation graph route fused with vector search.

    ``matter_id`` keeps notes of that matter and notes without a matter (other matters'
    notes are dropped); ``scopes`` keeps those layers; the firm is the conversation's, the
    given one, or the user's first; ``as_of`` (already parsed) searches the graph of the memory
    as it stood then. Raises NavigationInputError for bad filters or limits."""
    query = (query or "").strip()
    if not query:
        raise NavigationInputError(gettext("The query must not be empty."))
    if len(query) > 2000:
        raise NavigationInputError(gettext("The query holds at most 2000 characters."))
    if not 1 <= int(k) <= MAX_K:
        raise NavigationInputError(gettext("k must be between 1 and %(max)d.") % {"max": MAX_K})
    if conversation is not None and firm_id is None:
        firm_id = conversation.firm_id
    if matter_id is not None and firm_id is None:
        firm_id = Matter.objects.assigned_to(user).filter(pk=matter_id).values_list("firm_id", flat=True).first()
    context = resolve_context(user, firm_id=firm_id, matter_id=matter_id, as_of=as_of)
    result = LayeredNavResult(query=query, k=k)
    if context is None:
        return result
    # The matter narrows results, not the graph: the firm-wide layers stay reachable.
    context = replace(context, filters=GraphFilters())
    built = current_graph(context)
    result.graph_version = built.version
    graph = built.graph
    if graph.size == 0:
        return result
    scope_set = set(scopes) if scopes else None
    vector = get_embedder().embed_query(query) if query_vector is None else query_vector
    vector = np.asarray(vector, dtype=np.float32)
    vector = vector / (float(np.linalg.norm(vector)) or 1.0)
    route = trace(graph, query_scorer(graph, vector, frozenset(segment(query))), k=k)  # the real walk
    result.trace = TraceSerializer(GraphTrace(built, route)).data

    sims = graph.vectors @ vector
    depth = min(graph.size, max(5 * k, graph.params.ef_search))
    top = np.argpartition(-sims, depth - 1)[:depth] if depth < graph.size else np.arange(graph.size)
    exact = sorted(top.tolist(), key=lambda i: (-sims[i], i))
    graph_rank = {}
    for node, _score in route.results:
        if _allowed(built, node, matter_id, scope_set):
            graph_rank[node] = len(graph_rank) + 1
    vector_rank = {}
    for node in exact:
        if _allowed(built, node, matter_id, scope_set):
            vector_rank[node] = len(vector_rank) + 1
    scorer = query_scorer(graph, vector, frozenset(segment(query)))
    fused = {node: scorer(node) for node in set(graph_rank) | set(vector_rank)}
    for node in sorted(fused, key=lambda i: (-fused[i], i not in graph_rank, i))[:k]:
        result.hits.append(
            LayeredNavHit(
                note_id=graph.ids[node],
                score=round(fused[node], 6),
                similarity=round(float(sims[node]), 4),
                graph_rank=graph_rank.get(node),
                vector_rank=vector_rank.get(node),
                level=int(graph.levels[node]),
                memory_scope=built.info[node].scope,
                label=built.info[node].label,
            )
        )
    return result


def layered_nav_strategy(request):
    """``recall`` strategy adapter: SearchRequest → SearchResult with per-note reasons.

    The plan's layers (and its matter) restrict the notes; their order is the fused score above,
    reported as ``breakdown.total`` (the other breakdown terms are the usual ones for display).
    The user's visible raw messages join as in ``layered``: the reciprocal-rank fusion of
    ``recall.fusion`` (raw dense + raw keyword + this note order; a note and its source
    messages share one slot), reported as ``breakdown.fused``."""
    started = time.perf_counter()
    try:
        result = layered_nav_search(
            request.user, request.query, k=request.k, matter_id=request.plan.matter_id,
            scopes=request.plan.layers, conversation=request.conversation, query_vector=request.query_vector,
        )
    except NavigationInputError as error:
        raise InvalidSearch("query", str(error)) from None
    notes = Note.objects.visible_to(request.user).in_bulk([hit.note_id for hit in result.hits], field_name="pk")
    notes = {str(pk): note for pk, note in notes.items()}
    words = set(segment(request.query))
    ef = result.trace.get("ef", 0) or 1
    note_entries: list[Entry] = []
    details: dict[tuple[str, Any], tuple[Any, list[str]]] = {}
    for hit in result.hits:
        note = notes.get(hit.note_id)
        if note is None:  # deleted or hidden since the graph was read
            continue
        reasons = [gettext("%(layer)s, on level %(level)d of the navigation graph") % {
            "layer": MemoryScope(note.memory_scope).label, "level": hit.level}]
        if hit.graph_rank is not None:
            reasons.append(gettext("found by walking the navigation graph: no. %(rank)d (%(steps)d steps)") % {
                "rank": hit.graph_rank, "steps": len(result.trace.get("path", []))})
        if hit.vector_rank is not None:
            reasons.append(gettext("search by meaning: no. %(rank)d, similarity %(score).3f") % {
                "rank": hit.vector_rank, "score": hit.similarity})
        breakdown = ScoreBreakdown(
            semantic=round(max(0.0, hit.similarity), 4),
            keyword=round(keyword_score(words, note.search_text), 4),
            importance=round(float(note.importance), 4),
            confidence=round(float(note.confidence), 4),
            graph=round(1.0 - (hit.graph_rank - 1) / ef, 4) if hit.graph_rank else 0.0,
            recency=round(recency_score(note), 4),
            layer_weight=request.plan.layer_weight(note.memory_scope),
            total=hit.score,
        )
        key = (NOTE, note.pk)
        note_entries.append(Entry(key, breakdown, note.memory_scope, tuple(note.source_message_ids or ()),
                                  priority=breakdown.layer_weight))
        details[key] = (note, reasons)
    # What was said is memory too: the visible raw messages join by the same rank fusion as
    # ``layered`` (the graph-and-vector note order is the note list).
    said = message_candidates(
        request.user, request.plan, request.query_vector, query_tokens(request.query),
        limit=max(MESSAGE_LIMIT, 2 * request.k), exclude_ids=request.exclude_message_ids,
    ) if request.query_vector is not None else []
    by_message = {c.message.pk: c for c in said}
    message_entries = []
    for c in said:
        weight = request.plan.message_weight(c.message.conversation_id)
        message_entries.append(Entry((MESSAGE, c.message.pk), score_message(
            c.message, distance=c.distance, keyword=c.keyword, layer_weight=weight), MESSAGES, priority=weight))
    dense_rank, keyword_rank = dense_ranking(said), keyword_ranking(said)
    slots = fuse(note_entries, message_entries, dense_rank, keyword_rank, {},
                 turns={c.message.pk: c.turn_ids for c in said})
    hits = []
    for entry in select(slots, request.plan, request.k, RawFloor.of(dense_rank, keyword_rank)):
        breakdown = replace(entry.breakdown, fused=entry.fused, dense_rank=entry.ranks.get(DENSE),
                            keyword_rank=entry.ranks.get(KEYWORD), note_rank=entry.ranks.get(NOTES))
        if entry.kind == NOTE:
            note, reasons = details[entry.key]
            hits.append(Hit(note=note, layer=note.memory_scope, rank=len(hits) + 1, breakdown=breakdown,
                            reasons=reasons + [fusion_reason(entry)]))
        else:
            found = by_message[entry.key[1]]
            hits.append(Hit(message=found.message, partner=found.partner, layer=MESSAGES, rank=len(hits) + 1, breakdown=breakdown,
                            reasons=message_reasons(request, found, entry.breakdown) + [fusion_reason(entry)]))
    trace = result.trace or {}
    return SearchResult(
        strategy=request.strategy,
        query=request.query,
        plan=request.plan,
        hits=hits,
        timings={"layered_nav": round((time.perf_counter() - started) * 1000, 2)},
        stats={
            "graph_visited": int(trace.get("visited_total", 0)),
            "graph_path_steps": len(trace.get("path", [])),
            "graph_hit_results": len(trace.get("candidates", [])),
            "message_candidates": len(said),
        },
    )
