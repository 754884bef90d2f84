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

import functools
import json
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
from django.contrib.auth import get_user_model
from django.core.exceptions import EmptyResultSet, ImproperlyConfigured
from django.db import connection, transaction
from django.db.models import BooleanField, Q, QuerySet
from django.db.models.expressions import RawSQL
from pgvector.django import CosineDistance

from memory.models import DocumentChunk, Firm, Matter, MemoryScope, Note
from memory.models.conversations import SEARCH_CONFIG
from memory.erasure_hooks import LATEST_ERASURE_SQL, follow_erasures
from memory.models.notes import FIRM_WIDE_SCOPES
from recall import exact_vectors
from recall.instances import fast_timestamps, instance_from_row
from recall.keywords import STOP_WORDS, query_tokens  # noqa: F401  (re-exported)
from recall.plan import RetrievalPlan

DEFAULT_EF_SEARCH = 200
# The candidate list of the raw messages' HNSW walk (``strategies.layered``; a user's messages are
# walked only above EXACT_MESSAGE_MAX_ROWS). On real text embeddings, 40k messages of one user
# (bench/bench_walk_recall.py, BENCH_WALK_OWNERS=1 BENCH_WALK_LAYERS=1 BENCH_WALK_LIMIT=20),
# recall@10 against exact is 0.932 at 100, 0.961 at 200 and 0.977 at 400; at 100k messages the
# read costs +1.4 / +1.2 ms p50 / p95 at 200 and +4.7 / +5.4 ms at 400, against 100.
WALK_EF_SEARCH = 200
# The candidate list of the note statement's walks (the firm-wide layers share one, in the index
# all firms share). On real text embeddings (bench/bench_walk_recall.py, 40k rows) recall@10 per
# firm-wide layer against exact is 0.949–0.965 at 200 for a firm holding half of the index and
# 0.958–0.968 for one holding a tenth (docs/performance.md, "Why the firm-wide layers share one index").
NOTE_WALK_EF_SEARCH = 200
DEFAULT_MAX_SCAN_TUPLES = 20_000
# Candidates carry only what scoring and reasons need; the final hits are loaded in full
# (``hydrate``) — a few hundred light rows instead of a few hundred full notes.
CANDIDATE_FIELDS = (
    "id", "firm_id", "content", "memory_scope", "category", "matter_id", "owner_id", "importance",
    "confidence", "said_at", "stored_at", "search_text", "source_message_ids", "status",
)


@dataclass
class NoteCandidate:
    note: Note
    distance: float | None = None  # cosine distance to the query (1 - similarity)
    keyword_rank: float | None = None
    via_vector: bool = False
    via_keyword: bool = False
    via_message: bool = False


@dataclass(frozen=True)
class Reach:
    """The user's firms and assigned matters as literal ids, read once per search.

    ``visible_to(user)`` stays the rule on every query; on the hot path it is compiled with
    these ids (``visible_to(user, firm_ids=..., matter_ids=...)``) in a form the planner can
    estimate. With ``firm_id IN (subquery)`` alone PostgreSQL cannot
    tell that a small firm's layer is a handful of rows, picks the HNSW scan, and the
    iterative scan then wades through ``max_scan_tuples`` rows of other firms (measured:
    0.5 s and fewer than k rows at 100k notes). With literals it uses the btree on
    (firm, memory_scope, status) or on matter / owner and sorts the few rows exactly.
    """

    user_id: int
    firm_ids: tuple[int, ...]
    matter_ids: tuple[int, ...]
    #: The assigned matters that hold a document passage, read in the same statement. Not part of
    #: equality: the rules compiled per reach (``_compiled_visible_where``, the graph's links)
    #: depend on the firms and matters only, and an upload must not compile them again.
    document_matter_ids: tuple[int, ...] = field(compare=False)

    def may_hold_passages(self, matter_id: int | None = None) -> bool:
        """Whether a passage of ``matter_id`` (any assigned matter when None) may exist: a firm
        that has uploaded nothing pays no document read on every search."""
        if matter_id is None:
            return bool(self.document_matter_ids)
        return matter_id in self.document_matter_ids

    def literals(self) -> dict[str, tuple[int, ...]]:
        """Keyword arguments that give ``visible_to`` these ids instead of its subqueries."""
        return {"firm_ids": self.firm_ids, "matter_ids": self.matter_ids}


def reach_of(user) -> Reach:
    """The user's firms and assigned matters (``Firm.objects.of_user``, ``Matter.objects.assigned_to``)
    in ONE round trip: a search pays it before anything else (docs/performance.md, Search). The
    same statement reads which of those matters hold a document passage (one index probe per
    matter) and the newest erasure's id (``memory.erasure_hooks.follow_erasures``)."""
    if not user.is_authenticated:
        return Reach(0, (), (), ())
    sql, params = _reach_statement(user.pk)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        firm_ids, matter_ids, document_matter_ids, latest_erasure = cursor.fetchone()
    follow_erasures(latest_erasure)  # another process erased: forget what this one cached
    return Reach(user_id=user.pk, firm_ids=tuple(sorted(firm_ids)), matter_ids=tuple(sorted(matter_ids)),
                 document_matter_ids=tuple(sorted(document_matter_ids)))


@functools.lru_cache(maxsize=4096)
def _reach_statement(user_id: int) -> tuple[str, tuple]:
    """``reach_of``'s statement for one user, compiled once per process: building the two
    querysets costs more than running them (~1 ms), and the rules are evaluated by the database
    on every run (the user's id is their only input)."""
    user = get_user_model()(pk=user_id)
    firms_sql, firms_params = Firm.objects.of_user(user).order_by().values("pk").query.sql_with_params()
    matters_sql, matters_params = Matter.objects.assigned_to(user).order_by().values("pk").query.sql_with_params()
    # The assigned matters are evaluated once; those holding a passage are probed from that array.
    with_passages = (f"SELECT assigned_id FROM unnest(assigned.ids) assigned_id WHERE EXISTS "
                     f"(SELECT 1 FROM {DocumentChunk._meta.db_table} chunk WHERE chunk.matter_id = assigned_id)")
    return (f"SELECT ARRAY({firms_sql}), assigned.ids, ARRAY({with_passages}), {LATEST_ERASURE_SQL} "
            f"FROM (SELECT ARRAY({matters_sql}) AS ids) assigned",
            (*firms_params, *matters_params))


# --- the layer rule: declared once, rendered as a Q (ORM reads) and as SQL (the hot path) ---


@dataclass(frozen=True)
class Cond:
    """One condition on a ``memory_note`` column: ``value`` None means IS NULL, a tuple means
    IN, anything else equality."""

    column: str  # attname: memory_scope, matter_id, owner_id
    value: object = None


#: A layer's notes: an OR of alternatives, each an AND of conditions.
LayerRule = tuple[tuple[Cond, ...], ...]


def layer_rule(layer: str, plan: RetrievalPlan, reach: Reach) -> LayerRule:
    """Which notes of ``layer`` a search reads, on top of ``visible_to(user)`` — the only place
    this is stated: ``layer_filter`` (Q) and ``_vector_parts`` / ``_layers_condition`` (SQL)
    are generated from it (docs/architecture.md). The case layer is narrowed to the current
    matter when there is one."""
    scope = Cond("memory_scope", str(layer))
    if layer == MemoryScope.CASE and plan.matter_id is not None:
        return ((scope, Cond("matter_id", plan.matter_id)),)
    if layer == MemoryScope.CASE:
        return (
            (scope, Cond("matter_id", tuple(reach.matter_ids))),
            (scope, Cond("matter_id", None), Cond("owner_id", reach.user_id)),
        )
    if layer == MemoryScope.USER_PROFILE:
        return ((scope, Cond("owner_id", reach.user_id)),)
    return ((scope,),)


def _rule_q(rule: LayerRule) -> Q:
    """The rule as a Django ``Q``."""
    condition = Q(pk__in=[])
    for alternative in rule:
        both = Q()
        for cond in alternative:
            if cond.value is None:
                both &= Q(**{f"{cond.column}__isnull": True})
            elif isinstance(cond.value, tuple):
                both &= Q(**{f"{cond.column}__in": list(cond.value)})
            else:
                both &= Q(**{cond.column: cond.value})
        condition |= both
    return condition


def _rule_sql(rule: LayerRule) -> tuple[str, list]:
    """The rule as a parenthesised SQL condition on ``memory_note`` and its params."""
    alternatives, params = [], []
    for alternative in rule:
        pieces = []
        for cond in alternative:
            column = f'"memory_note"."{cond.column}"'
            if cond.value is None:
                pieces.append(f"{column} IS NULL")
            elif isinstance(cond.value, tuple) and not cond.value:
                pieces.append("FALSE")
            elif isinstance(cond.value, tuple):
                pieces.append(f"{column} IN ({', '.join(['%s'] * len(cond.value))})")
                params += cond.value
            else:
                pieces.append(f"{column} = %s")
                params.append(cond.value)
        alternatives.append("(" + " AND ".join(pieces) + ")")
    return "(" + (" OR ".join(alternatives) or "FALSE") + ")", params


def _rules(plan: RetrievalPlan, reach: Reach, layers: Iterable[str]) -> LayerRule:
    """The OR of the rules of ``layers``."""
    return tuple(alternative for layer in layers for alternative in layer_rule(layer, plan, reach))


def layer_filter(plan: RetrievalPlan, reach: Reach, layers: Iterable[str] | None = None) -> Q:
    """Notes of the planned layers (``layer_rule``) in the user's firms."""
    return Q(firm_id__in=reach.firm_ids) & _rule_q(_rules(plan, reach, layers if layers is not None else plan.layers))


def searchable_notes(user, plan: RetrievalPlan, reach: Reach) -> QuerySet[Note]:
    """The only note set a search may read: visible, active, in the planned layers."""
    return (
        Note.objects.visible_to(user, **reach.literals())
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


_LOCAL_HNSW = (
    "SELECT set_config('hnsw.ef_search', %s, true), "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.max_scan_tuples', %s, true)"
)


def _fetch_with_local_hnsw(sql: str, params: list, ef_search: int, max_scan_tuples: int) -> list[tuple]:
    """The rows of ``sql`` under the HNSW settings of ``_set_local_hnsw``, in ONE round trip: both
    statements go in one query string (client-side binding: the simple query protocol), which
    PostgreSQL runs as one implicit transaction — the settings hold for the read and end with it.
    ``transaction.atomic`` with its own SET cost BEGIN, SET and COMMIT on top. Inside a caller's
    transaction they last until its end, as ``SET LOCAL`` there always did."""
    with connection.cursor() as cursor:
        fast_timestamps(cursor)
        cursor.execute(f"{_LOCAL_HNSW}; {sql}", [str(int(ef_search)), str(int(max_scan_tuples)), *params])
        cursor.nextset()
        return cursor.fetchall()


def read_of_statement(sql: str, params: Sequence) -> tuple[str, list]:
    """The read of a ``_fetch_with_local_hnsw`` query string without its settings statement (what
    an EXPLAIN of the read takes: the tests, the bench's access report)."""
    prefix = _LOCAL_HNSW + "; "
    if sql.startswith(prefix):
        return sql[len(prefix):], list(params)[2:]
    return sql, list(params)


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


# --- raw-SQL reads (one round trip per stage) -------------------------------------------------
#
# The hot path builds its statements by hand, but the visibility rule is never re-implemented:
# the WHERE clause of ``Note.objects.visible_to(user).active()`` (firm, ethical wall, owner) is
# compiled by the ORM, with the firm and matter ids of ``reach_of`` as literals, and pasted into
# every part; each part adds its layer's conditions, rendered from ``layer_rule`` (``_vector_parts``).


@dataclass(frozen=True)
class _Visible:
    sql: str
    params: tuple


def _visible_where(user, reach: Reach) -> _Visible | None:
    """The compiled WHERE of ``visible_to(user).active()`` on ``memory_note`` (no joins), or
    None when the user sees nothing (anonymous, no firm)."""
    if not user.is_authenticated:
        return None  # sees nothing
    return _compiled_visible_where(user.pk, reach)


@functools.lru_cache(maxsize=4096)
def _compiled_visible_where(user_id: int, reach: Reach) -> _Visible | None:
    """The rule compiled with the user's firms and matters just read (``reach_of``) as literals.

    Cached on exactly those inputs: a changed membership or assignment is a different key.
    Compiling through the ORM costs ~1 ms; the literals spare PostgreSQL planning and joining
    the rule's subqueries in every part of the statement (~6 ms at 100k notes)."""
    user = get_user_model()(pk=user_id)
    queryset = Note.objects.visible_to(user, **reach.literals()).active()
    query = queryset.query
    compiler = query.get_compiler(using=queryset.db)
    try:
        sql, params = compiler.compile(query.where)
    except EmptyResultSet:
        return None  # no firm: sees nothing
    if len([alias for alias, refcount in query.alias_refcount.items() if refcount]) > 1:
        raise ImproperlyConfigured("Note.visible_to with literal ids must not need a join: it is pasted into raw SQL")
    return _Visible(sql, tuple(params))


def vector_literal(vector: np.ndarray) -> str:
    """The query vector as pgvector text. A search sends the same vector in its note and message
    statements (on two threads): the last one written is kept, by identity."""
    global _last_literal
    last = _last_literal
    if last is not None and last[0] is vector:
        return last[1]
    literal = "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"
    _last_literal = (vector, literal)  # one tuple, replaced whole: safe across threads
    return literal


_last_literal: tuple[np.ndarray, str] | None = None


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
EXACT_CASE_MAX_ROWS = 30_000
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
    return plan_json[0]["Plan"]["Plan Rows"] <= EXACT_CASE_MAX_ROWS


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


def _layers_condition(plan: RetrievalPlan, reach: Reach, layers: Sequence[str]) -> tuple[str, list]:
    """The OR of the rules of ``layers`` as SQL (the keyword read)."""
    return _rule_sql(_rules(plan, reach, layers))


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


def _sourced_by(message_ids: list[int]) -> RawSQL:
    """The notes whose provenance holds one of ``message_ids``, found first (an InitPlan) in the
    GIN index one message at a time. As one ``&&`` condition the planner guesses 0.5% of the
    notes per message — for 40 messages a sequential scan (87 ms at 200k notes) — and as
    ``id IN (subquery)`` it folds the subquery back and ANDs it with every layer's bitmap (~4 ms)."""
    return RawSQL(
        '"memory_note"."id" = ANY(ARRAY(SELECT s.id FROM unnest(%s::bigint[]) AS m(id) CROSS JOIN LATERAL '
        "(SELECT n.id FROM memory_note n WHERE n.source_message_ids @> ARRAY[m.id]) s))",
        (message_ids,), output_field=BooleanField(),
    )


def notes_from_messages(
    user, plan: RetrievalPlan, reach: Reach, message_ids: Sequence[int], vector: np.ndarray, *, limit: int
) -> list[NoteCandidate]:
    """Visible notes whose provenance includes one of ``message_ids`` (GIN index
    ``note_source_messages_gin``), the ``limit`` nearest the query: one statement on the
    compiled rule (``_visible_where``, the layers' rule from ``layer_rule``), light instances.

    Sorted by ``distance + 0``: ordered by the bare distance, the planner walked the HNSW index
    and filtered the few notes it met (default ``ef_search``, no iterative scan), so at 100k notes
    none of the notes the messages became was found (docs/performance.md, "Sixth round"). Built
    through the ORM the read cost ~9 ms at 100k notes, of which PostgreSQL ran 0.8 (the rest:
    building and compiling the queryset, converting the vector again); now ~2 ms
    (docs/performance.md, "Seventh round")."""
    visible = _visible_where(user, reach) if reach.firm_ids and message_ids else None
    if visible is None or not plan.layers:
        return []
    names, columns = _light_columns()
    sourced = _sourced_by(list(message_ids))
    layer_sql, layer_params = _layers_condition(plan, reach, plan.layers)
    distance = "(\"memory_note\".\"embedding\" <=> (SELECT v FROM query_vector))"
    with connection.cursor() as cursor:
        fast_timestamps(cursor)
        cursor.execute(
            f"WITH query_vector AS MATERIALIZED (SELECT %s::vector AS v) "
            f"SELECT {', '.join(columns)}, {distance} AS distance FROM memory_note "
            f"WHERE ({visible.sql}) AND {layer_sql} AND {sourced.sql} ORDER BY {distance} + 0 LIMIT %s",
            [vector_literal(vector), *visible.params, *layer_params, *sourced.params, limit],
        )
        rows = cursor.fetchall()
    alias, width = connection.alias, len(names)
    return [
        NoteCandidate(
            note=instance_from_row(Note, alias, names, row[:width]),
            distance=None if row[width] is None else float(row[width]),
            via_message=True,
        )
        for row in rows
    ]


def hydrate(user, reach: Reach, note_ids: Sequence) -> dict:
    """The full notes (firm, matter, owner joined) for the final hits — still through visible_to,
    with the firm and matter ids of ``reach`` as literals (the subquery form cost ~5 ms here)."""
    # The embedding is deferred (still loaded on access): no caller of a hit reads it.
    if not note_ids:
        return {}  # every hit is a raw message: not even the queryset is built
    return (
        Note.objects.visible_to(user, **reach.literals())
        .select_related("firm", "matter", "owner").defer("embedding")
        .in_bulk(list(note_ids))
    )
