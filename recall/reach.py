"""Whom a search reads for: the user's reach (``Reach``: firms and assigned matters as literal
ids, read once per search by ``reach_of``) and the one access rule, ``visible_to(user).active()``,
compiled with those ids to the raw SQL the hot path pastes into its statements
(``_visible_where``). The rule is never re-implemented here, only compiled by the ORM.

Every read starts from ``visible_to(user)``; nothing here writes.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from django.contrib.auth import get_user_model
from django.core.exceptions import EmptyResultSet, ImproperlyConfigured
from django.db import connection

from memory.models import Firm, Matter, Note
from documents.models import DocumentChunk
from memory.erasure_hooks import LATEST_ERASURE_SQL, follow_erasures


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
