"""The built-in strategies: ``semantic`` (vector only) and ``layered`` (plan, per-layer
candidates, keyword search, fusion, graph expansion, quotas). Both only read."""
from __future__ import annotations

import time
from uuid import UUID

from memory.retrieval import candidates as cand
from memory.retrieval.graph import SEED_COUNT, GraphReach, expand
from memory.retrieval.registry import register_strategy
from memory.retrieval.scoring import ScoreBreakdown, score, semantic_only
from memory.retrieval.types import Hit, MessageMatch, SearchRequest, SearchResult

MIN_PER_LAYER = 20
MESSAGE_LIMIT = 10


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def semantic(request: SearchRequest) -> SearchResult:
    """Plain cosine nearest neighbours over the visible, active notes of the planned layers."""
    started = time.perf_counter()
    reach = request.reach or cand.reach_of(request.user)
    rows = cand.vector_candidates(request.user, request.plan, reach, request.query_vector, limit=request.k)
    full = cand.hydrate(request.user, reach, [c.note.pk for c in rows])
    for c in rows:
        c.note = full.get(c.note.pk, c.note)
    hits = [
        Hit(
            note=c.note,
            layer=c.note.memory_scope,
            rank=rank,
            breakdown=semantic_only(c.note, c.distance),
            reasons=[f"语义相似度 semantic similarity {1 - c.distance:.3f}"],
        )
        for rank, c in enumerate(rows, start=1)
    ]
    return SearchResult(
        strategy=request.strategy,
        query=request.query,
        plan=request.plan,
        hits=hits,
        timings={"vector": _ms(started)},
        stats={"candidates": len(rows)},
    )


def _merge(target: dict[UUID, cand.NoteCandidate], found: list[cand.NoteCandidate]) -> None:
    for candidate in found:
        existing = target.get(candidate.note.pk)
        if existing is None:
            target[candidate.note.pk] = candidate
            continue
        if existing.distance is None:
            existing.distance = candidate.distance
        existing.keyword_rank = existing.keyword_rank or candidate.keyword_rank
        existing.via_vector |= candidate.via_vector
        existing.via_keyword |= candidate.via_keyword
        existing.via_message |= candidate.via_message


def layered(request: SearchRequest) -> SearchResult:
    """Seed 000 layered retrieval with AdaMem fusion; see ``memory.retrieval.scoring`` for the formula."""
    user, plan, k, vector = request.user, request.plan, request.k, request.query_vector
    timings: dict[str, float] = {}
    tokens = cand.query_tokens(request.query)
    words = set(tokens)
    per_layer = max(2 * k, MIN_PER_LAYER)

    started = time.perf_counter()
    pool: dict[UUID, cand.NoteCandidate] = {}
    access = request.reach or cand.reach_of(user)
    # One statement for every layer's vector read and the keyword read (``timings["keyword"]``
    # is then 0: its time is inside "vector"); the ORM reads remain as the fallback.
    fast = cand.read_candidates(user, plan, access, vector, tokens, per_layer=per_layer)
    if fast is not None:
        by_layer, keyword = fast
        for found in by_layer.values():
            _merge(pool, found)
        _merge(pool, keyword)
        timings["vector"] = _ms(started)
        timings["keyword"] = 0.0
    else:
        by_layer = cand.vector_candidates_by_layer(user, plan, access, vector, per_layer=per_layer)
        for found in by_layer.values():
            _merge(pool, found)
        timings["vector"] = _ms(started)
        started = time.perf_counter()
        _merge(pool, cand.keyword_candidates(user, plan, access, tokens, vector, limit=per_layer))
        timings["keyword"] = _ms(started)

    messages: list[MessageMatch] = []
    if plan.search_messages:
        started = time.perf_counter()
        found_messages = cand.message_hits(
            user,
            tokens,
            conversation_id=plan.conversation_id,
            matter_id=plan.matter_id,
            limit=MESSAGE_LIMIT,
        )
        messages = [MessageMatch(message=m.message, rank=m.rank) for m in found_messages]
        _merge(
            pool,
            cand.notes_from_messages(
                user, plan, access, [m.message.pk for m in found_messages], vector, limit=per_layer
            ),
        )
        timings["messages"] = _ms(started)

    started = time.perf_counter()
    scored = {note_id: _score(request, c, None, words) for note_id, c in pool.items()}
    reach: dict[UUID, GraphReach] = {}
    links_read = 0
    if plan.graph_expansion and scored:
        ranked = sorted(scored.items(), key=lambda item: item[1].total, reverse=True)[:SEED_COUNT]
        best = ranked[0][1].total or 1.0
        expansion = expand(
            user, plan, access, [(note_id, b.total / best) for note_id, b in ranked], pool, vector
        )
        reach, links_read = expansion.reach, expansion.links_read
        pool.update(expansion.new_candidates)
        scored = {note_id: _score(request, c, reach.get(note_id), words) for note_id, c in pool.items()}
        timings["graph"] = _ms(started)
    selected = _select(request, scored, pool)
    full = cand.hydrate(user, access, selected)
    selected = [note_id for note_id in selected if note_id in full]
    hits = [
        Hit(
            note=full[note_id],
            layer=pool[note_id].note.memory_scope,
            rank=rank,
            breakdown=scored[note_id],
            reasons=_reasons(request, pool[note_id], scored[note_id], reach.get(note_id), words, pool),
        )
        for rank, note_id in enumerate(selected, start=1)
    ]
    timings["fusion"] = _ms(started)  # scoring, graph expansion (also timed alone) and selection
    return SearchResult(
        strategy=request.strategy,
        query=request.query,
        plan=plan,
        hits=hits,
        messages=messages,
        timings=timings,
        stats={
            "candidates": len(pool),
            "vector_candidates": sum(1 for c in pool.values() if c.via_vector),
            "keyword_candidates": sum(1 for c in pool.values() if c.via_keyword),
            "message_candidates": sum(1 for c in pool.values() if c.via_message),
            "graph_reached": len(reach),
            "links_read": links_read,
        },
    )


def _score(
    request: SearchRequest, candidate: cand.NoteCandidate, reach: GraphReach | None, words: set[str]
) -> ScoreBreakdown:
    note = candidate.note
    return score(
        note,
        distance=candidate.distance,
        query_words=words,
        graph=reach.score if reach else 0.0,
        layer_weight=request.plan.layer_weight(note.memory_scope),
    )


def _select(
    request: SearchRequest,
    scored: dict[UUID, ScoreBreakdown],
    pool: dict[UUID, cand.NoteCandidate],
) -> list[UUID]:
    """Best-first under per-layer quotas (``plan.quota``), then back-filled up to k; sorted by total."""
    ordered = sorted(scored, key=lambda note_id: scored[note_id].total, reverse=True)
    taken: list[UUID] = []
    per_layer: dict[str, int] = {}
    for note_id in ordered:
        layer = pool[note_id].note.memory_scope
        if per_layer.get(layer, 0) >= request.plan.quota(layer, request.k):
            continue
        taken.append(note_id)
        per_layer[layer] = per_layer.get(layer, 0) + 1
        if len(taken) == request.k:
            break
    if len(taken) < request.k:
        chosen = set(taken)
        taken += [note_id for note_id in ordered if note_id not in chosen][: request.k - len(taken)]
    return sorted(taken, key=lambda note_id: scored[note_id].total, reverse=True)


def _reasons(
    request: SearchRequest,
    candidate: cand.NoteCandidate,
    breakdown: ScoreBreakdown,
    reach: GraphReach | None,
    words: set[str],
    pool: dict[UUID, cand.NoteCandidate],
) -> list[str]:
    note, plan = candidate.note, request.plan
    reasons = [f"层级 layer {note.memory_scope} (plan position {plan.layers.index(note.memory_scope) + 1})"]
    if note.memory_scope == "case" and plan.matter_id is not None and note.matter_id == plan.matter_id:
        reasons.append("当前案件的事实 current matter")
    if candidate.via_vector or breakdown.semantic:
        reasons.append(f"语义相似度 semantic {breakdown.semantic:.3f}")
    matched = sorted(words & set(note.search_text.split()))
    if matched:
        reasons.append(f"关键词 keywords: {'、'.join(matched[:8])} ({len(matched)}/{len(words)})")
    if candidate.via_message:
        reasons.append("来源消息与所指的对话原文吻合 source message matches the referenced conversation")
    if reach is not None:
        seed = pool.get(reach.seed_id)
        seed_text = seed.note.content[:24] if seed else str(reach.seed_id)
        reasons.append(
            f"图扩展 graph: {reach.hops} hop(s) from 「{seed_text}」 via {' → '.join(reach.path_types)}"
            f" (relatedness {reach.score:.3f})"
        )
    return reasons


register_strategy("semantic", semantic)
register_strategy("layered", layered)
