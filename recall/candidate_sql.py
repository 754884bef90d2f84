"""Candidate reads for one search: pgvector HNSW per layer and PostgreSQL full-text over the notes,
built as SQL on the compiled access rule (recall/reach.py) and the layer rules
(recall/layer_rules.py), under the HNSW settings of recall/hnsw.py.

Every read starts from ``visible_to(user)``; nothing here writes.

Hot path (``read_candidates``, also behind ``vector_candidates_by_layer``): what needs no query
vector — the EXPLAIN deciding the exact case read, the keyword read — runs first
(``prepare_note_read``, while the query encodes); then every layer's nearest-neighbour read and
the keyword candidates' distances go to PostgreSQL as ONE ``UNION ALL`` statement, sent with its
HNSW settings in one round trip (``read_prepared_notes``); the layers compared one note at a time
are compared in process when their vectors are kept (``exact_vectors``), and only the nearest
ids are read back, under the same rule. The parts all carry the ORM-compiled
WHERE clause of ``visible_to(user).active()`` (given the user's firm and matter ids just read, as
literals) plus the layer's own conditions. Those are
declared once, in ``layer_rule``, and rendered both as SQL (here) and as a ``Q`` (``layer_filter``,
for the ORM reads: semantic strategy, history, graph, provenance). Rows come back as light
``Note`` instances (no embedding, no queryset building per layer). The three firm-wide layers
share one HNSW walk over their partial index; the case layer over all of the user's matters is
read exactly from a covering index when it is small enough (figures: bench/search_results.md).
A user who can see nothing (anonymous, no firm) gets nothing without a query.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from pgvector.django import CosineDistance

from infra.embeddings.literals import vector_literal
from memory.models import MemoryScope, Note
from memory.models.conversations import SEARCH_CONFIG
from memory.models.notes import FIRM_WIDE_SCOPES
from recall import exact_vectors
from recall.hnsw import (
    DEFAULT_EF_SEARCH, DEFAULT_MAX_SCAN_TUPLES, NOTE_WALK_EF_SEARCH, _fetch_with_local_hnsw, _set_local_hnsw,
)
from recall.instances import fast_timestamps, instance_from_row
from recall.layer_rules import Cond, _layers_condition, _rule_sql, layer_filter, layer_rule, searchable_notes
from recall.note_candidate import CANDIDATE_FIELDS, NoteCandidate
from recall.plan import RetrievalPlan
from recall.reach import Reach, _Visible, _visible_where


def _light_columns() -> tuple[list[str], list[str]]:
    """(attnames in model order, quoted SQL columns) of the light candidate fields."""
    names = [f.attname for f in Note._meta.concrete_fields if f.attname in _LIGHT or f.name in _LIGHT]
    return names, [f'"memory_note"."{connection.ops.quote_name(n)[1:-1]}"' for n in names]


_LIGHT = frozenset(CANDIDATE_FIELDS) | {"firm_id", "matter_id", "owner_id"}


# The firm-wide layers (no matter, no owner) are read with ONE nearest-neighbour scan over their
# own partial HNSW index (``note_embedding_firmwide_hnsw``) and split by layer afterwards.

# The case layer over all of the user's matters (no current matter) is read EXACTLY, from the
# covering index ``note_case_vectors`` ((matter, owner) → id, firm, scope, status, embedding: an
# index-only scan, no heap pages), when the planner expects at most this many rows. A filtered
# HNSW walk there keeps only the notes of the user's few matters: when the question's own
# neighbourhood belongs to other matters the iterative scan wanders far (p95 ~80 ms at 100k notes)
# and returns near-ties in the wrong order (recall@10 0.45). The exact read of 14k rows costs
# ~10 ms. Above the bound (a lawyer on very many large matters) the HNSW walk is used again.
# The bound is settings.EXACT_CASE_MAX_ROWS.
# Nearest rows taken from the kept vectors beyond a part's LIMIT (float32 in numpy vs pgvector).
KEPT_MARGIN = 5


@dataclass(frozen=True)
class _Part:
    """One nearest-neighbour read: SQL condition (on top of the compiled ``visible_to`` rule),
    its params, LIMIT, and whether every matching row is compared (no HNSW index)."""

    condition: str
    params: list
    limit: int
    exact: bool = False
    alternative: tuple = ()  # an exact part's rule alternative (``Cond``s): its groups in exact_vectors


def _vector_parts(
    plan: RetrievalPlan,
    reach: Reach,
    layers: Sequence[str],
    per_layer: int | dict[str, int],
    *,
    exact_case: bool = False,
) -> list[_Part]:
    """The nearest-neighbour reads of ``layers``, their conditions rendered from ``layer_rule``.
    ``per_layer``: one LIMIT for every layer, or a LIMIT per layer. The firm-wide layers (a
    scope condition only) share one read; an exact case read is one part per alternative."""
    limit_of = per_layer.get if isinstance(per_layer, dict) else (lambda _layer: per_layer)
    parts: list[_Part] = []
    firm_wide = [layer for layer in layers if layer in FIRM_WIDE_SCOPES]
    for layer in layers:
        rule = layer_rule(layer, plan, reach)
        if layer in FIRM_WIDE_SCOPES and len(firm_wide) > 1:
            assert rule == ((Cond("memory_scope", str(layer)),),), "a shared read needs scope-only rules"
            if layer == firm_wide[0]:
                merged = ((Cond("memory_scope", tuple(str(x) for x in firm_wide)),),)
                parts.append(_Part(*_rule_sql(merged), sum(limit_of(x) for x in firm_wide)))
        elif layer == MemoryScope.USER_PROFILE or (
            layer == MemoryScope.CASE and (plan.matter_id is not None or exact_case)
        ):
            # One user's profile notes (covering index ``note_profile_vectors``), one matter's
            # notes, or the user's matters (covering index ``note_case_vectors``) and own
            # matter-less notes: few enough to compare every one.
            parts += [_Part(*_rule_sql((alternative,)), limit_of(layer), exact=True, alternative=alternative)
                      for alternative in rule]
        else:
            parts.append(_Part(*_rule_sql(rule), limit_of(layer)))
    return parts


def _case_read_is_exact(plan: RetrievalPlan, reach: Reach, layers: Sequence[str]) -> bool:
    """Whether the case layer over all assigned matters is small enough to read exactly
    (the planner's row estimate for those matters: one cheap EXPLAIN, no rows read)."""
    if MemoryScope.CASE not in layers or plan.matter_id is not None or not reach.matter_ids:
        return False
    matters, params = _rule_sql(layer_rule(MemoryScope.CASE, plan, reach)[:1])  # the assigned-matters alternative
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN (FORMAT JSON) SELECT 1 FROM memory_note WHERE {matters}", params)
        plan_json = cursor.fetchone()[0]
    if isinstance(plan_json, str):
        plan_json = json.loads(plan_json)
    return plan_json[0]["Plan"]["Plan Rows"] <= settings.EXACT_CASE_MAX_ROWS


@dataclass(frozen=True)
class NoteRead:
    """What the note read knows before the query vector (``prepare_note_read``): whom it may see,
    which layers with which LIMITs, whether the case layer is read exactly, and the keyword
    candidates (rows of the light columns with their rank, no distance yet)."""

    visible: _Visible | None
    plan: RetrievalPlan
    reach: Reach
    layers: tuple[str, ...]
    limits: dict[str, int]
    exact_case: bool = False
    keyword_rows: tuple[tuple, ...] = ()
    parts: tuple[_Part, ...] = ()
    kept: dict[int, list[exact_vectors.GroupVectors]] = field(default_factory=dict)  # by part index


def prepare_note_read(
    user,
    plan: RetrievalPlan,
    reach: Reach,
    layers: Sequence[str],
    *,
    per_layer: int | dict[str, int],
    tokens: Sequence[str] = (),
    keyword_limit: int = 0,
    keyword_pool: int = 0,
    keyword_layers: Sequence[str] | None = None,
) -> NoteRead:
    """Everything of the note read that needs no query vector, run while the query encodes (on
    the alongside connection, recall/alongside.py): the EXPLAIN that decides whether
    the case layer is read exactly, the check (and any reload) of the exact layers' vectors kept
    in process (``exact_vectors``), and the keyword (GIN) read. After the vector only the
    nearest-neighbour parts remain (``read_prepared_notes``), plus the distances of the keyword
    candidates by id. ``keyword_layers`` (default: ``layers``) are those of the keyword read (a
    search whose case layer is read on another connection still reads keywords in every layer).
    A user who can see nothing (anonymous, no firm) gets nothing, without a query."""
    layers = tuple(layers)
    limits = dict(per_layer) if isinstance(per_layer, dict) else {layer: per_layer for layer in layers}
    visible = _visible_where(user, reach) if reach.firm_ids else None
    if visible is None or not layers:
        return NoteRead(None, plan, reach, layers, limits)
    exact_case = _case_read_is_exact(plan, reach, layers)
    parts = tuple(_vector_parts(plan, reach, layers, limits, exact_case=exact_case))
    kept = _kept_vectors_of(parts, reach)
    keyword_rows: tuple[tuple, ...] = ()
    query = _tsquery_text(tokens) if keyword_limit else None
    if query is not None:
        _names, columns = _light_columns()
        tsv = f"to_tsvector('{SEARCH_CONFIG}'::regconfig, COALESCE(\"memory_note\".\"search_text\", ''))"
        layer_sql, layer_params = _layers_condition(plan, reach, layers if keyword_layers is None else keyword_layers)
        outer = ", ".join(column.replace('"memory_note".', "m.") for column in columns)
        # The GIN filter is the AND of the query words (the notes with every word: the strongest
        # keyword candidates, and a short posting-list intersection); the rank counts any word
        # (OR). An OR filter on common words matched most of a firm's notes and ranking them all
        # cost 70 ms at 100k notes; a LIMIT on it still paid ~18 ms for the full GIN bitmap.
        # Notes sharing only some words still enter through the vector reads, and every
        # candidate's keyword overlap is scored in Python (``scoring.keyword_score``).
        with connection.cursor() as cursor:
            fast_timestamps(cursor)
            cursor.execute(
                f"SELECT {outer}, ts_rank(to_tsvector('{SEARCH_CONFIG}'::regconfig, COALESCE(m.search_text, '')), "
                f"to_tsquery('{SEARCH_CONFIG}'::regconfig, %s)) AS kw "
                f"FROM (SELECT memory_note.* FROM memory_note WHERE ({visible.sql}) AND ({layer_sql}) "
                f"AND {tsv} @@ to_tsquery('{SEARCH_CONFIG}'::regconfig, %s) LIMIT %s) m ORDER BY kw DESC LIMIT %s",
                [query, *visible.params, *layer_params, _tsquery_text(tokens, "&"), keyword_pool, keyword_limit],
            )
            keyword_rows = tuple(cursor.fetchall())
    return NoteRead(visible, plan, reach, layers, limits, exact_case, keyword_rows, parts, kept)


def _kept_vectors_of(parts: Sequence[_Part], reach: Reach) -> dict[int, list[exact_vectors.GroupVectors]]:
    """The current vectors of the exact parts' groups, by part index (recall/exact_vectors.py):
    one version statement, and a load of the groups that changed. Empty inside a transaction."""
    if not exact_vectors.in_use():
        return {}
    groups = {index: exact_vectors.groups_of(part.alternative, reach.firm_ids)
              for index, part in enumerate(parts) if part.exact}
    groups = {index: found for index, found in groups.items() if found}
    if not groups:
        return {}
    current = exact_vectors.kept_vectors.current(group for found in groups.values() for group in found)
    return {index: [current[group] for group in found] for index, found in groups.items()}


def read_prepared_notes(
    read: NoteRead,
    vector: np.ndarray,
    *,
    ef_search: int | None = None,
    max_scan_tuples: int = DEFAULT_MAX_SCAN_TUPLES,
) -> tuple[dict[str, list[NoteCandidate]], list[NoteCandidate]]:
    """The nearest-neighbour reads of a prepared note read and the distances of its keyword
    candidates, as ONE statement (``ef_search`` default: ``NOTE_WALK_EF_SEARCH``). A keyword candidate
    that is no longer visible and active when the vector statement runs is dropped; one without
    an embedding keeps no distance."""
    ef_search = NOTE_WALK_EF_SEARCH if ef_search is None else ef_search
    visible, plan, reach, layers, limits = read.visible, read.plan, read.reach, read.layers, read.limits
    if visible is None or not layers:
        return {layer: [] for layer in layers}, []
    names, columns = _light_columns()
    select = ", ".join(columns)
    base = f"FROM memory_note WHERE ({visible.sql}) AND \"memory_note\".\"embedding\" IS NOT NULL"
    # The query vector is sent once (8 KB of text) and every part reads it from the CTE; an
    # index scan accepts the InitPlan value as its ORDER BY argument.
    qvec = "(SELECT v FROM query_vector)"
    statements: list[str] = []
    params: list = [vector_literal(vector)]
    distance = f"(\"memory_note\".\"embedding\" <=> {qvec})"
    parts = read.parts or tuple(_vector_parts(plan, reach, layers, limits, exact_case=read.exact_case))
    for index, part in enumerate(parts):
        if index in read.kept:
            # Compared in process (exact_vectors): the nearest ids, read back under the rule,
            # with pgvector's distances; a few more than the LIMIT absorb float32 rounding.
            nearest = exact_vectors.nearest_ids(read.kept[index], vector, part.limit + KEPT_MARGIN)
            if not nearest:
                continue
            statements.append(
                f"(SELECT {select}, {distance} AS distance, 0 AS src {base} AND {part.condition} "
                f"AND \"memory_note\".\"id\" = ANY(%s::uuid[]))"
            )
            params += [*visible.params, *part.params, nearest]
            continue
        if part.exact:
            # Rank by id and distance alone (an index-only scan of the covering index, "+ 0" so
            # no HNSW index serves the sort: every matching row is compared), then read the
            # light columns of the winners only.
            statements.append(
                f"(SELECT {select}, ranked.distance, 0 AS src FROM "
                f"(SELECT \"memory_note\".\"id\" AS id, {distance} AS distance {base} AND {part.condition} "
                f"ORDER BY {distance} + 0 LIMIT %s) ranked JOIN memory_note ON memory_note.id = ranked.id)"
            )
        else:
            statements.append(
                f"(SELECT {select}, {distance} AS distance, 0 AS src "
                f"{base} AND {part.condition} ORDER BY {distance} LIMIT %s)"
            )
        params += [*visible.params, *part.params, part.limit]
    width = len(names)
    keyword_ids = [row[0] for row in read.keyword_rows]  # "id" is the first light column
    if keyword_ids:
        # The keyword candidates' distances (NULL without an embedding), by primary key, still
        # under the visibility rule.
        statements.append(
            f"(SELECT {select}, {distance} AS distance, 1 AS src FROM memory_note "
            f"WHERE ({visible.sql}) AND \"memory_note\".\"id\" = ANY(%s::uuid[]))"
        )
        params += [*visible.params, keyword_ids]
    if not statements:
        return {layer: [] for layer in layers}, []
    sql = "WITH query_vector AS MATERIALIZED (SELECT %s::vector AS v) " + " UNION ALL ".join(statements)
    rows = _fetch_with_local_hnsw(sql, params, max(ef_search, max(limits.values(), default=0)), max_scan_tuples)
    by_layer: dict[str, dict] = {layer: {} for layer in layers}
    keyword_distance: dict = {}
    alias = connection.alias
    for row in rows:
        distance_value, src = row[width], row[width + 1]
        if src == 1:
            keyword_distance[row[0]] = distance_value
            continue
        note = instance_from_row(Note, alias, names, row[:width])
        by_layer[note.memory_scope][note.pk] = NoteCandidate(note=note, distance=float(distance_value), via_vector=True)
    keyword = [
        NoteCandidate(
            note=instance_from_row(Note, alias, names, row[:width]),
            distance=None if keyword_distance[row[0]] is None else float(keyword_distance[row[0]]),
            keyword_rank=float(row[width]), via_keyword=True,
        )
        for row in read.keyword_rows
        if row[0] in keyword_distance
    ]
    result = {}
    for layer, found in by_layer.items():
        ordered = sorted(found.values(), key=lambda c: c.distance)  # relaxed_order / per-matter parts
        result[layer] = ordered[: limits[layer]]
    return result, keyword


def _read_layers(
    user,
    plan: RetrievalPlan,
    reach: Reach,
    vector: np.ndarray,
    layers: Sequence[str],
    *,
    per_layer: int | dict[str, int],
    tokens: Sequence[str] = (),
    keyword_limit: int = 0,
    keyword_pool: int = 0,
    ef_search: int | None = None,
    max_scan_tuples: int = DEFAULT_MAX_SCAN_TUPLES,
) -> tuple[dict[str, list[NoteCandidate]], list[NoteCandidate]]:
    """All vector reads (and the keyword read) of one search: the reads without the vector,
    then one statement. A user who can see nothing (anonymous, no firm) gets nothing, without a query."""
    read = prepare_note_read(user, plan, reach, layers, per_layer=per_layer, tokens=tokens,
                             keyword_limit=keyword_limit, keyword_pool=keyword_pool)
    return read_prepared_notes(read, vector, ef_search=ef_search, max_scan_tuples=max_scan_tuples)


def vector_candidates_by_layer(
    user,
    plan: RetrievalPlan,
    reach: Reach,
    vector: np.ndarray,
    *,
    per_layer: int,
    ef_search: int | None = None,
    max_scan_tuples: int = DEFAULT_MAX_SCAN_TUPLES,
    layers: Iterable[str] | None = None,
) -> dict[str, list[NoteCandidate]]:
    """The ``per_layer`` nearest visible notes of each planned layer (HNSW, iterative scan)."""
    layers = list(layers if layers is not None else plan.layers)
    by_layer, _keyword = _read_layers(
        user, plan, reach, vector, layers, per_layer=per_layer, ef_search=ef_search, max_scan_tuples=max_scan_tuples
    )
    return by_layer


def _tsquery_text(tokens: Sequence[str], operator: str = "|") -> str | None:
    """Raw tsquery text: the quoted lexemes joined by ``operator`` (quotes escaped: no injection)."""
    if not tokens:
        return None
    return f" {operator} ".join("'" + token.replace("\\", "\\\\").replace("'", "''") + "'" for token in tokens[:32])


KEYWORD_POOL = 400
# Nearest neighbours read for each layer after the first: a later layer may fill at most
# ``plan.quota`` = 4 of k = 10 hits, so 10 candidates leave room for the fusion to reorder;
# at 100k notes the cost of a filtered HNSW read grows with its LIMIT (buffer reads: p50 of the
# statement 47 ms with 20 per layer, 36 ms with 10). The firm-wide layers share one walk whose
# LIMIT is the sum of theirs, so one of them can take fewer than its own LIMIT when another is
# nearer the query (the recall figures in bench/search_results.md measure exactly this).
LATER_LAYER_LIMIT = 10


def prepare_candidates(
    user, plan: RetrievalPlan, reach: Reach, tokens: Sequence[str], *, per_layer: int,
    layers: Sequence[str] | None = None, keyword: bool = True,
) -> NoteRead:
    """The part of ``read_candidates`` that needs no query vector (it runs while the query encodes).
    With ``layers``, only those layers' nearest-neighbour reads (each with the LIMIT it has in the
    whole plan); without ``keyword``, no keyword read (another read of the search does it)."""
    limits = {
        layer: per_layer if position == 0 else LATER_LAYER_LIMIT
        for position, layer in enumerate(plan.layers)
    }
    layers = list(plan.layers if layers is None else layers)
    return prepare_note_read(
        user, plan, reach, layers, per_layer={layer: limits[layer] for layer in layers},
        tokens=tokens if keyword else (), keyword_limit=per_layer if keyword else 0, keyword_pool=KEYWORD_POOL,
        keyword_layers=list(plan.layers),
    )


def read_candidates(
    user, plan: RetrievalPlan, reach: Reach, vector: np.ndarray, tokens: Sequence[str], *, per_layer: int
) -> tuple[dict[str, list[NoteCandidate]], list[NoteCandidate]]:
    """Per-layer vector candidates and keyword candidates: the keyword read, then one statement."""
    return read_prepared_notes(prepare_candidates(user, plan, reach, tokens, per_layer=per_layer), vector)


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


def superseded_candidates(
    user, plan: RetrievalPlan, reach: Reach, vector: np.ndarray, *, limit: int
) -> list[NoteCandidate]:
    """History questions: the nearest visible superseded versions in the planned layers (they
    keep their validity window, ``valid_from`` … ``valid_to``, and point at their successor).

    With the iterative scan (``_set_local_hnsw``): when superseded notes are a large share, the
    planner walks the HNSW index, and a plain walk meets its ``ef_search`` nearest notes and keeps
    the superseded ones among them (2 of 20 with a fifth of 200k notes superseded)."""
    with transaction.atomic():
        _set_local_hnsw(max(DEFAULT_EF_SEARCH, limit), DEFAULT_MAX_SCAN_TUPLES)
        rows = list(
            Note.objects.visible_to(user, **reach.literals())
            .filter(status=Note.Status.SUPERSEDED)
            .filter(layer_filter(plan, reach))
            .with_embedding()
            .only(*CANDIDATE_FIELDS, "valid_from", "valid_to", "superseded_by")
            .annotate(distance=CosineDistance("embedding", vector))
            .order_by("distance")[:limit]
        )
    rows.sort(key=lambda note: note.distance)  # relaxed order
    return [NoteCandidate(note=note, distance=float(note.distance), via_vector=True) for note in rows]
