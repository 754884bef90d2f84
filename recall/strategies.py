"""The built-in strategies: ``semantic`` (vector only) and ``layered`` (plan, per-layer
candidates, keyword search, fusion, graph expansion, quotas). Both only read."""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import datetime
from uuid import UUID

from django.utils import timezone
from django.utils.timezone import localtime
from django.utils.translation import gettext

from memory.labels import speaker_label
from memory.models import LinkType, MemoryScope, Note
from recall import candidate_sql, exact_vectors, hnsw, note_loading
from recall.alongside import can_run_alongside, run_alongside
from recall.asked_value import ANSWER_WINDOW, answer_first
from recall.fusion import (
    CORRECTION_ANCHORS, DENSE, HISTORY_WINDOW, KEYWORD, NOTES, Entry, RawFloor, below_their_corrections,
    dense_ranking, first_message_id, fuse, fusion_reason, keyword_ranking, lift_earlier_statements, raw_fusion,
    select,
)
from recall.keywords import function_words, query_tokens, term, text_terms
from recall.glossary import other_language
from recall.graph import SEED_COUNT, GraphReach, expand
from recall.messages import (
    MessageCandidate, prepare_message_read, read_message_candidates, statements_of,
)
from recall.note_candidate import NoteCandidate
from recall.plan import MESSAGES
from recall.reach import Reach, reach_of
from recall.registry import register_strategy
from recall.scoring import QueryWords, ScoreBreakdown, score, score_message, semantic_only
from recall.topic import query_word_weights
from recall.types import MESSAGE, NOTE, Hit, SearchRequest, SearchResult

MIN_PER_LAYER = 20
MESSAGE_LIMIT = 20  # raw-message candidates per source (nearest, keyword), at least 2k


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


def semantic(request: SearchRequest) -> SearchResult:
    """Plain cosine nearest neighbours over the visible, active notes of the planned layers."""
    started = time.perf_counter()
    reach = request.reach or reach_of(request.user)
    rows = candidate_sql.vector_candidates(request.user, request.plan, reach, request.query_vector, limit=request.k)
    full = note_loading.hydrate(request.user, reach, [c.note.pk for c in rows])
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


def _merge(target: dict[UUID, NoteCandidate], found: list[NoteCandidate]) -> None:
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


@dataclass
class _NoteReads:
    """What a note read found, by source, in the order the pool takes them (``_note_pool``)."""

    by_layer: dict[str, list[NoteCandidate]] = field(default_factory=dict)
    keyword: list[NoteCandidate] = field(default_factory=list)
    history: list[NoteCandidate] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def _read_notes(request: SearchRequest, access: Reach, tokens: list[str], per_layer: int,
                layers: list[str] | None = None, *, keyword: bool = True, history: bool = True) -> _NoteReads:
    """The note candidates of the planned ``layers`` (default: all) plus, for a history question,
    the superseded notes; with their timings. What needs no vector (the case-exactness EXPLAIN,
    the keyword read) runs first, while the query encodes; then one statement: each layer's
    vector read and the keyword candidates' distances."""
    found = _NoteReads()
    started = time.perf_counter()
    prepared = candidate_sql.prepare_candidates(request.user, request.plan, access, tokens, per_layer=per_layer,
                                                layers=layers, keyword=keyword)
    found.timings["notes_before_vector"] = _ms(started)
    vector = request.query_vector
    started = time.perf_counter()
    found.by_layer, found.keyword = candidate_sql.read_prepared_notes(prepared, vector)
    found.timings["vector"] = _ms(started)
    found.timings["keyword"] = 0.0  # its time is inside "notes_before_vector"
    if history and request.plan.history:
        started = time.perf_counter()
        found.history = candidate_sql.superseded_candidates(request.user, request.plan, access, vector, limit=per_layer)
        found.timings["history"] = _ms(started)
    return found


def _case_read_apart(plan, access: Reach) -> bool:
    """Whether the case layer over all of the user's matters is read on a connection of its own:
    compared in PostgreSQL (every note of the assigned matters, ~10 ms for 14k notes) it is the
    longest part of the note statement, and the other layers' parts then run beside it instead
    of after it. Not when its vectors are kept in process (~0.5 ms: one statement is faster), nor
    when reads may not run alongside at all (on one connection it would be one more round trip)."""
    return (plan.matter_id is None and MemoryScope.CASE in plan.layers and len(plan.layers) > 1
            and bool(access.matter_ids) and can_run_alongside() and not exact_vectors.in_use())


def _note_pool(plan, reads: list[_NoteReads]) -> dict[UUID, NoteCandidate]:
    """One candidate per note, merged in the order of one read: the layers in plan order, then the
    keyword candidates, then the superseded notes (ties keep that order downstream)."""
    pool: dict[UUID, NoteCandidate] = {}
    for layer in plan.layers:
        for read in reads:
            _merge(pool, read.by_layer.get(layer, []))
    for read in reads:
        _merge(pool, read.keyword)
    for read in reads:
        _merge(pool, read.history)
    return pool


def message_limit_for(k: int) -> int:
    """How many raw-message candidates a search of ``k`` reads (nearest, and keyword best)."""
    return max(MESSAGE_LIMIT, 2 * k)


def raw_turns(request: SearchRequest) -> RawFloor:
    """The raw-turn search alone: the messages the layered search reads as candidates (same
    words, limit, vector and walk), fused by their dense and BM25 ranks — its floor."""
    access = request.reach or reach_of(request.user)
    read = prepare_message_read(request.user, request.plan, message_tokens(request, keyword_tokens(request)),
                                function_words=function_words(request.query),
                                limit=message_limit_for(request.k),
                                exclude_ids=request.exclude_message_ids, reach=access)
    said = read_message_candidates(read, request.query_vector, limit=message_limit_for(request.k),
                                   ef_search=hnsw.WALK_EF_SEARCH)
    return raw_fusion(said)


def _slot_text(slot, pool: dict, by_message: dict) -> str:
    """What a slot says: a note's content, a message's words."""
    if slot.kind == NOTE:
        return pool[slot.key[1]].note.content if slot.key[1] in pool else ""
    candidate = by_message.get(slot.key[1])
    return candidate.message.content if candidate is not None else ""


def layered(request: SearchRequest) -> SearchResult:
    """Layered retrieval (docs/read-path.md) over notes AND raw messages: each note gets its layered score
    (``recall.scoring``), and the final order is the reciprocal-rank fusion of the raw
    dense, raw keyword and note rankings (``recall.fusion``)."""
    user, plan, k = request.user, request.plan, request.k
    timings: dict[str, float] = {}
    now = timezone.now()  # one moment for every candidate's recency
    tokens = keyword_tokens(request)
    words = set(tokens)
    per_layer = max(2 * k, MIN_PER_LAYER)
    message_limit = message_limit_for(k)

    access = request.reach or reach_of(user)
    # The note statement (it waits for the query vector) runs on a second connection while
    # this one reads the messages (recall/alongside.py); inside a transaction it
    # runs here, after the message reads that need no vector.
    # No current matter: the case layer over all assigned matters on a third connection, beside
    # the other layers' statement.
    if _case_read_apart(plan, access):
        others = [layer for layer in plan.layers if layer != MemoryScope.CASE]
        note_reads = [
            run_alongside(lambda: _read_notes(request, access, tokens, per_layer, [MemoryScope.CASE],
                                              keyword=False, history=False)),
            run_alongside(lambda: _read_notes(request, access, tokens, per_layer, others)),
        ]
    else:
        note_reads = [run_alongside(lambda: _read_notes(request, access, tokens, per_layer))]

    # While the query is still encoding: the message reads that need no vector.
    started = time.perf_counter()
    message_read = prepare_message_read(user, plan, message_tokens(request, tokens), limit=message_limit,
                                        function_words=function_words(request.query),
                                        exclude_ids=request.exclude_message_ids, reach=access)
    timings["messages_before_vector"] = _ms(started)
    vector = request.query_vector

    # Every turn is memory: the user's visible raw messages are always candidates.
    started = time.perf_counter()
    said = read_message_candidates(message_read, vector, limit=message_limit, ef_search=hnsw.WALK_EF_SEARCH)
    # What needs only the messages is done while the note statement may still run: the word
    # weights (words every nearest line holds name the topic, not the answer: they weigh less
    # for notes and messages alike, recall.topic), the messages' fusion entries and,
    # for an explicit reference to what was said, the notes those messages became.
    # The raw floor is the plain baseline: its keyword list is BM25 before the topic discount.
    dense_rank = dense_ranking(said)
    floor = raw_fusion(said)
    weights = query_word_weights(words, said)
    messages = _message_entries(plan, said, now)
    from_messages: list[NoteCandidate] = []
    if plan.search_messages and said:  # an explicit reference: the notes those messages became
        from_messages = note_loading.notes_from_messages(user, plan, access, [c.message.pk for c in said], vector,
                                                         limit=per_layer)
    timings["messages"] = _ms(started)
    started = time.perf_counter()
    reads = [read() for read in note_reads]
    pool = _note_pool(plan, reads)
    _merge(pool, from_messages)
    for read in reads:  # the slower of parallel reads
        for stage, ms in read.timings.items():
            timings[stage] = max(timings.get(stage, 0.0), ms)
    timings["notes_wait"] = _ms(started)  # what the note statement added after the messages

    started = time.perf_counter()
    query_words = QueryWords(words, weights)  # folded once for every candidate
    scored = {note_id: _score(request, c, None, query_words, now) for note_id, c in pool.items()}
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
        # A score changes only by its graph term: only the notes the expansion reached or added.
        for note_id in {*reach, *expansion.new_candidates}:
            scored[note_id] = _score(request, pool[note_id], reach.get(note_id), query_words, now)
        timings["graph"] = _ms(started)
    notes = [
        Entry((NOTE, note_id), breakdown, pool[note_id].note.memory_scope,
              tuple(pool[note_id].note.source_message_ids or ()), priority=breakdown.layer_weight)
        for note_id, breakdown in scored.items()
    ]
    by_message = {c.message.pk: c for c in said}
    superseded_by = {
        note_id: c.note.superseded_by_id for note_id, c in pool.items() if c.note.status == Note.Status.SUPERSEDED
    }
    slots = fuse(notes, messages, dense_rank, keyword_ranking(said), superseded_by,
                 turns={c.message.pk: c.turn_ids for c in said}, first_version=plan.first_version)
    if not plan.history:  # what a correction replaced is history: below the note that replaced it
        slots = below_their_corrections(slots, replaced_messages(
            [slot.key[1] for slot in slots[:CORRECTION_ANCHORS] if slot.kind == NOTE]))
        # "林晓雯的押金是多少？": a memory stating the amount comes first (recall/asked_value.py)
        slots = answer_first(slots, {slot.key: _slot_text(slot, pool, by_message) for slot in slots[:ANSWER_WINDOW]},
                             request.query)
    if plan.history:  # earlier statements of the same subject as the best slots rank just below them
        slots = lift_earlier_statements(slots, statements_of(user, {
            first_message_id(slot) for slot in slots[:HISTORY_WINDOW]
        } - {None}, corrections=plan.first_version), first_version=plan.first_version)
    selected = select(slots, plan, k, floor)
    full = note_loading.hydrate(user, access, [e.key[1] for e in selected if e.kind == NOTE])
    hits: list[Hit] = []
    for entry in selected:
        breakdown = replace(
            entry.breakdown, fused=entry.fused, dense_rank=entry.ranks.get(DENSE),
            keyword_rank=entry.ranks.get(KEYWORD), note_rank=entry.ranks.get(NOTES),
        )
        if entry.kind == NOTE:
            note_id = entry.key[1]
            if note_id not in full:
                continue
            reasons = _reasons(request, pool[note_id], entry.breakdown, reach.get(note_id), words, pool)
            reasons += [_absorbed_reason(by_message[m.key[1]], m) for m in entry.absorbed]
            hits.append(Hit(note=full[note_id], layer=pool[note_id].note.memory_scope, rank=len(hits) + 1,
                            breakdown=breakdown, reasons=reasons + [fusion_reason(entry)]))
        else:
            found = by_message[entry.key[1]]
            reasons = message_reasons(request, found, entry.breakdown) + [fusion_reason(entry)]
            hits.append(Hit(message=found.message, partner=found.partner, layer=MESSAGES, rank=len(hits) + 1,
                            breakdown=breakdown, reasons=reasons))
    timings["fusion"] = _ms(started)  # scoring, graph expansion (also timed alone) and selection
    return SearchResult(
        strategy=request.strategy,
        query=request.query,
        plan=plan,
        hits=hits,
        timings=timings,
        raw_floor=floor.kept(k),
        stats={
            "candidates": len(pool) + len(said),
            "vector_candidates": sum(1 for c in pool.values() if c.via_vector),
            "keyword_candidates": sum(1 for c in pool.values() if c.via_keyword),
            "message_candidates": len(said),
            "message_vector_candidates": sum(1 for c in said if c.via_vector),
            "message_keyword_candidates": sum(1 for c in said if c.via_keyword),
            "notes_from_messages": sum(1 for c in pool.values() if c.via_message),
            "graph_reached": len(reach),
            "links_read": links_read,
        },
    )


def replaced_messages(note_ids: list[UUID]) -> dict[UUID, set[int]]:
    """For each of ``note_ids`` that superseded earlier versions: the messages those versions
    were made from. Only message ids of notes the asker already sees the successor of are read
    (nothing of their text), so no other visibility rule is needed."""
    replaced: dict[UUID, set[int]] = {}
    if note_ids:
        for successor, sources in Note.objects.filter(superseded_by_id__in=note_ids).values_list(
                "superseded_by_id", "source_message_ids"):
            replaced.setdefault(successor, set()).update(sources or ())
    return {note_id: ids for note_id, ids in replaced.items() if ids}


# Whether the keyword lists read the context the question leans on (all of it: keyword reads
# are not bounded like the encoder), after the question's own words — "那具体到哪天截止？" names
# nothing, the line before it does. Chosen on the consultation set's dev split
# (docs/evaluation.md, "Long queries").
KEYWORDS_READ_CONTEXT = True


def keyword_tokens(request: SearchRequest) -> list[str]:
    """The query words of the keyword reads: the question's, then its context's."""
    tokens = query_tokens(request.query)
    if KEYWORDS_READ_CONTEXT and request.context:
        tokens = list(dict.fromkeys([*tokens, *query_tokens(request.context)]))
    return tokens


def message_tokens(request: SearchRequest, tokens: list[str]) -> list[str]:
    """The words the raw-message reads look for: the query words, then the question's words in
    the other language (``recall.glossary``). Only the messages' reads: a note's keyword share
    is over the query's own words, which a translation must not dilute."""
    return list(dict.fromkeys([*tokens, *other_language(query_tokens(request.query))]))


def _message_entries(plan, said: list[MessageCandidate], now: datetime) -> list[Entry]:
    """The raw messages' fusion entries, scored with their layer weight."""
    entries = []
    for c in said:
        weight = plan.message_weight(c.message.conversation_id)
        breakdown = score_message(c.message, distance=c.distance, keyword=c.keyword, layer_weight=weight, now=now)
        entries.append(Entry((MESSAGE, c.message.pk), breakdown, MESSAGES, priority=weight))
    return entries


def message_reasons(request: SearchRequest, found: MessageCandidate, breakdown: ScoreBreakdown) -> list[str]:
    """Why a raw message was recalled: who said it when, and its semantic and keyword match."""
    message = found.message
    reasons = [gettext("what was said: %(speaker)s, %(time)s") % {
        "speaker": speaker_label(message.speaker or message.role), "time": f"{localtime(message.said_at):%Y-%m-%d %H:%M}"}]
    if request.plan.search_messages and breakdown.layer_weight == 1.0:
        reasons.append(gettext("the question refers to earlier talk"))
    if found.distance is not None:
        reasons.append(gettext("similar in meaning: %(score).3f") % {"score": breakdown.semantic})
    else:
        reasons.append(gettext("not searchable by meaning yet: found by its words alone"))
    if found.matched_words:
        reasons.append(gettext("shared words: %(words)s") % {"words": "、".join(found.matched_words[:8])})
    if found.partner is not None:
        reasons.append(gettext("shown with its reply, from the same turn")
                       if found.partner.role == found.partner.Role.ASSISTANT
                       else gettext("shown with the question it answers, from the same turn"))
    return reasons


def _absorbed_reason(found: MessageCandidate, entry: Entry) -> str:
    return gettext("the message it came from matched too; shown once")


def _score(
    request: SearchRequest, candidate: NoteCandidate, reach: GraphReach | None, query_words: QueryWords,
    now: datetime,
) -> ScoreBreakdown:
    note = candidate.note
    return score(
        note,
        distance=candidate.distance,
        query_words=query_words,
        graph=reach.score if reach else 0.0,
        layer_weight=request.plan.layer_weight(note.memory_scope),
        now=now,
    )


def _reasons(
    request: SearchRequest,
    candidate: NoteCandidate,
    breakdown: ScoreBreakdown,
    reach: GraphReach | None,
    words: set[str],
    pool: dict[UUID, NoteCandidate],
) -> list[str]:
    note, plan = candidate.note, request.plan
    reasons = [gettext("%(layer)s (layer %(position)d searched)") % {
        "layer": MemoryScope(note.memory_scope).label, "position": plan.layers.index(note.memory_scope) + 1}]
    if note.memory_scope == "case" and plan.matter_id is not None and note.matter_id == plan.matter_id:
        reasons.append(gettext("a fact of the current matter"))
    if candidate.via_vector or breakdown.semantic:
        reasons.append(gettext("similar in meaning: %(score).3f") % {"score": breakdown.semantic})
    note_terms = text_terms(note.search_text)
    matched = sorted(word for word in words if term(word) in note_terms)
    if matched:
        reasons.append(gettext("shared words: %(words)s (%(matched)d of %(total)d)") % {
            "words": "、".join(matched[:8]), "matched": len(matched), "total": len(words)})
    if note.status == Note.Status.SUPERSEDED:
        until = f"{localtime(note.valid_to):%Y-%m-%d}" if note.valid_to else "?"
        reasons.append(gettext("earlier version, valid %(start)s – %(end)s, replaced by a newer one (ranked below it)")
                       % {"start": f"{localtime(note.valid_from):%Y-%m-%d}", "end": until})
    if candidate.via_message:
        reasons.append(gettext("comes from the conversation the question refers to"))
    if reach is not None:
        seed = pool.get(reach.seed_id)
        seed_text = seed.note.content[:24] if seed else "…"
        links = dict(LinkType.choices)
        reasons.append(gettext("related to 「%(seed)s」 through %(path)s (relatedness %(score).3f)") % {
            "seed": seed_text, "path": " → ".join(str(links.get(t, t)) for t in reach.path_types),
            "score": reach.score})
    return reasons


register_strategy("semantic", semantic)
register_strategy("layered", layered)
