"""Candidate reads for one search: pgvector HNSW per layer, PostgreSQL full-text, archived messages.

Every read starts from ``visible_to(user)``; nothing here writes.

HNSW under filters: pgvector applies WHERE clauses *after* the index scan, so a filtered
query could return far fewer than LIMIT rows. We run the vector reads inside one
transaction with ``SET LOCAL`` (via ``set_config(..., true)``):
``hnsw.ef_search`` (candidate list size), ``hnsw.iterative_scan = relaxed_order`` (keep
scanning the graph until LIMIT rows pass the filter, pgvector ≥ 0.8) and
``hnsw.max_scan_tuples`` (the bound on that scan). The querysets are evaluated inside
the same transaction (pgvector #675); relaxed order means rows may come slightly out of
order, so callers re-sort by the distance we annotate.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db import connection, transaction
from django.db.models import Q, QuerySet
from pgvector.django import CosineDistance

from memory.models import Firm, Matter, MemoryScope, Message, Note
from memory.retrieval.plan import RetrievalPlan
from memory.segmentation import segment

# Function words that carry no retrieval signal in a question.
STOP_WORDS = frozenset(
    "的 了 是 我 你 他 她 它 们 我们 你们 吗 呢 啊 吧 呀 在 和 与 及 或 也 就 都 要 会 能 有 没有 这 那 这个 那个 "
    "个 怎么 怎么办 怎样 什么 如何 一下 可以 应该 请问 请 帮 帮我 说 说过 过 之前 上次 刚才 一个 还 吗 哪些 哪 "
    "多少 为 为什么 是否 对 把 被 给 让 the a an of to is are what how".split()
)
DEFAULT_EF_SEARCH = 100
DEFAULT_MAX_SCAN_TUPLES = 20_000
# Candidates carry only what scoring and reasons need; the final hits are loaded in full
# (``hydrate``) — a few hundred light rows instead of a few hundred full notes.
CANDIDATE_FIELDS = (
    "id", "firm_id", "content", "memory_scope", "category", "matter_id", "owner_id", "importance",
    "confidence", "said_at", "stored_at", "search_text", "source_message_ids",
)


@dataclass
class NoteCandidate:
    note: Note
    distance: float | None = None  # cosine distance to the query (1 - similarity)
    keyword_rank: float | None = None
    via_vector: bool = False
    via_keyword: bool = False
    via_message: bool = False


@dataclass
class MessageHit:
    message: Message
    rank: float


def query_tokens(query: str) -> list[str]:
    """Segmented query words without function words, in order, de-duplicated."""
    tokens = [token for token in segment(query) if token not in STOP_WORDS]
    return list(dict.fromkeys(tokens))


def _tsquery(tokens: Sequence[str]) -> SearchQuery | None:
    """An OR of quoted lexemes in raw tsquery syntax (quotes escaped, so no syntax injection)."""
    if not tokens:
        return None
    quoted = " | ".join("'" + token.replace("\\", "\\\\").replace("'", "''") + "'" for token in tokens[:32])
    return SearchQuery(quoted, config="simple", search_type="raw")


@dataclass(frozen=True)
class Reach:
    """The user's firms and assigned matters as literal ids, read once per search.

    ``visible_to(user)`` stays the rule on every query; these literals only *repeat* it in a
    form the planner can estimate. With ``firm_id IN (subquery)`` alone PostgreSQL cannot
    tell that a small firm's layer is a handful of rows, picks the HNSW scan, and the
    iterative scan then wades through ``max_scan_tuples`` rows of other firms (measured:
    0.5 s and fewer than k rows at 100k notes). With literals it uses the btree on
    (firm, memory_scope, status) or on matter / owner and sorts the few rows exactly.
    """

    user_id: int
    firm_ids: tuple[int, ...]
    matter_ids: tuple[int, ...]


def reach_of(user) -> Reach:
    if not user.is_authenticated:
        return Reach(0, (), ())
    return Reach(
        user_id=user.pk,
        firm_ids=tuple(Firm.objects.of_user(user).values_list("pk", flat=True)),
        matter_ids=tuple(Matter.objects.assigned_to(user).values_list("pk", flat=True)),
    )


def layer_filter(plan: RetrievalPlan, reach: Reach, layers: Iterable[str] | None = None) -> Q:
    """Notes of the planned layers; the case layer is narrowed to the current matter when there is one."""
    condition = Q(pk__in=[])
    for layer in layers if layers is not None else plan.layers:
        if layer == MemoryScope.CASE and plan.matter_id is not None:
            condition |= Q(memory_scope=layer, matter_id=plan.matter_id)
        elif layer == MemoryScope.CASE:
            condition |= Q(memory_scope=layer) & (
                Q(matter_id__in=reach.matter_ids) | Q(matter__isnull=True, owner_id=reach.user_id)
            )
        elif layer == MemoryScope.USER_PROFILE:
            condition |= Q(memory_scope=layer, owner_id=reach.user_id)
        else:
            condition |= Q(memory_scope=layer)
    return Q(firm_id__in=reach.firm_ids) & condition


def searchable_notes(user, plan: RetrievalPlan, reach: Reach) -> QuerySet[Note]:
    """The only note set a search may read: visible, active, in the planned layers."""
    return (
        Note.objects.visible_to(user)
        .active()
        .filter(layer_filter(plan, reach))
        .only(*CANDIDATE_FIELDS)
    )


def _set_local_hnsw(ef_search: int, max_scan_tuples: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
            "set_config('hnsw.max_scan_tuples', %s, true)",
            [str(int(ef_search)), str(int(max_scan_tuples))],
        )


def vector_candidates_by_layer(
    user,
    plan: RetrievalPlan,
    reach: Reach,
    vector: np.ndarray,
    *,
    per_layer: int,
    ef_search: int = DEFAULT_EF_SEARCH,
    max_scan_tuples: int = DEFAULT_MAX_SCAN_TUPLES,
    layers: Iterable[str] | None = None,
) -> dict[str, list[NoteCandidate]]:
    """The ``per_layer`` nearest visible notes of each planned layer (HNSW, iterative scan)."""
    layers = list(layers if layers is not None else plan.layers)
    result: dict[str, list[NoteCandidate]] = {layer: [] for layer in layers}
    if not layers:
        return result
    base = Note.objects.visible_to(user).active().with_embedding().only(*CANDIDATE_FIELDS)
    # One statement: a UNION ALL of one ORDER BY distance LIMIT n per layer (each may use HNSW).
    parts = [
        base.filter(layer_filter(plan, reach, [layer]))
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance")[:per_layer]
        for layer in layers
    ]
    queryset = parts[0].union(*parts[1:], all=True) if len(parts) > 1 else parts[0]
    with transaction.atomic():
        _set_local_hnsw(max(ef_search, per_layer), max_scan_tuples)
        rows = list(queryset)  # evaluated inside the transaction: SET LOCAL applies
    rows.sort(key=lambda note: note.distance)  # relaxed_order may return rows slightly out of order
    for note in rows:
        result[note.memory_scope].append(NoteCandidate(note=note, distance=float(note.distance), via_vector=True))
    return result


def vector_candidates(
    user,
    plan: RetrievalPlan,
    reach: Reach,
    vector: np.ndarray,
    *,
    limit: int,
    ef_search: int = DEFAULT_EF_SEARCH,
    max_scan_tuples: int = DEFAULT_MAX_SCAN_TUPLES,
) -> list[NoteCandidate]:
    """The ``limit`` nearest visible notes over all planned layers at once (one HNSW scan)."""
    with transaction.atomic():
        _set_local_hnsw(max(ef_search, limit), max_scan_tuples)
        rows = list(
            searchable_notes(user, plan, reach)
            .with_embedding()
            .annotate(distance=CosineDistance("embedding", vector))
            .order_by("distance")[:limit]
        )
    rows.sort(key=lambda note: note.distance)
    return [NoteCandidate(note=note, distance=float(note.distance), via_vector=True) for note in rows]


def keyword_candidates(
    user, plan: RetrievalPlan, reach: Reach, tokens: Sequence[str], vector: np.ndarray, *, limit: int
) -> list[NoteCandidate]:
    """Full-text matches on the segmented ``search_text`` (GIN index), best ``ts_rank`` first."""
    query = _tsquery(tokens)
    if query is None:
        return []
    vector_expr = SearchVector("search_text", config="simple")
    rows = (
        searchable_notes(user, plan, reach)
        .annotate(search_vector=vector_expr)
        .filter(search_vector=query)
        .annotate(keyword_rank=SearchRank(vector_expr, query), distance=CosineDistance("embedding", vector))
        .order_by("-keyword_rank")[:limit]
    )
    return [
        NoteCandidate(
            note=note,
            distance=None if note.distance is None else float(note.distance),
            keyword_rank=float(note.keyword_rank),
            via_keyword=True,
        )
        for note in rows
    ]


def message_hits(
    user,
    tokens: Sequence[str],
    *,
    conversation_id: int | None,
    matter_id: int | None,
    limit: int,
) -> list[MessageHit]:
    """Archived raw messages matching the question (explicit references such as 你之前说过).

    The conversation's messages when one is given, else those of every conversation the
    user may see (narrowed to the matter when there is one).
    """
    query = _tsquery(tokens)
    if query is None:
        return []
    messages = Message.objects.visible_to(user).filter(status=Message.Status.COMPLETE)
    if conversation_id is not None:
        messages = messages.filter(conversation_id=conversation_id)
    elif matter_id is not None:
        messages = messages.filter(conversation__matter_id=matter_id)
    vector_expr = SearchVector("search_text", config="simple")
    rows = (
        messages.annotate(search_vector=vector_expr)
        .filter(search_vector=query)
        .annotate(rank=SearchRank(vector_expr, query))
        .order_by("-rank", "-said_at")[:limit]
    )
    return [MessageHit(message=message, rank=float(message.rank)) for message in rows]


def notes_from_messages(
    user, plan: RetrievalPlan, reach: Reach, message_ids: Sequence[int], vector: np.ndarray, *, limit: int
) -> list[NoteCandidate]:
    """Visible notes whose provenance includes one of ``message_ids``."""
    if not message_ids:
        return []
    rows = (
        searchable_notes(user, plan, reach)
        .filter(source_message_ids__overlap=list(message_ids))
        .annotate(distance=CosineDistance("embedding", vector))
        .order_by("distance")[:limit]
    )
    return [
        NoteCandidate(
            note=note,
            distance=None if note.distance is None else float(note.distance),
            via_message=True,
        )
        for note in rows
    ]


def hydrate(user, note_ids: Sequence) -> dict:
    """The full notes (firm, matter, owner joined) for the final hits — still through visible_to."""
    return Note.objects.visible_to(user).select_related("firm", "matter", "owner").in_bulk(list(note_ids))
