"""The vectors of the exact layers, kept in process and checked before every use.

A search compares every note of a few layers with the query (a matter's case notes, the user's
profile; ``candidate_sql._vector_parts``): in PostgreSQL that costs ~0.5 µs a row, mostly copying the
1.5 KB index tuples (14k case notes of ten matters: ~8 ms, the longest read after the vector).
Here those vectors sit in one float32 matrix per group, one vector per column, and the comparison
is one vector-matrix product (~0.6 ms for 14k in cache, ~1.2 ms not). What stays in the database
is the decision of what may be seen: the nearest ids found here are read back through
``visible_to(user)`` and the layer's rule, with their distances computed by pgvector, so a row
the user may not see can never come out of this module — at worst a stale group would miss a
candidate, and staleness is ruled out as follows.

Freshness: every note carries ``vector_seq``, a number from one sequence set by a trigger when
the note is inserted or its scope, firm, matter, owner, status or embedding changes (migration
0018). Before a search uses a group it reads the group's (count, newest number, XOR of numbers)
from a narrow partial index (~0.3 ms a matter, while the query encodes; an index-only scan, so
pages changed since the last vacuum cost heap visits: 15 ms for ten matters right after 5,000
notes of the firm were updated) with the active
embedding generation: any insert, delete or such update since the group was loaded changes it,
and the group is loaded again (version read first, rows after: a change in between only makes
the next check reload once more). Only reads outside a transaction use it: a transaction may
hold rows no one else can see, and those must not be kept.

Bounded by ``SEARCH_EXACT_VECTORS_MB`` per process (least recently used out; 0 turns it off).
docs/read-path.md, "Exact layers in memory".
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Iterable, Sequence
from uuid import UUID

import numpy as np
from django.conf import settings
from django.db import connection

from memory.erasure_hooks import register_cached_content

ANY = "*"  # an owner or matter condition that is not there


@dataclass(frozen=True)
class Group:
    """The active, embedded notes of one scope with one matter (None: no matter; ``ANY``) and
    one owner (``ANY``), in the searcher's firms: the unit kept, checked and reloaded. (A user's
    profile notes in a firm they left would otherwise take places the rule then empties.)"""

    scope: str
    matter_id: int | None | str
    owner_id: int | str
    firm_ids: tuple[int, ...] = ()

    def condition(self, *, versions: bool = False) -> tuple[str, list]:
        """The group as SQL on ``memory_note``: for its version (``versions``: the predicate of
        ``note_case_versions`` / ``note_profile_versions``, which only this read may use; over
        every firm — a change anywhere in it only reloads) or its rows (the covering indexes
        ``note_case_vectors`` / ``note_profile_vectors``, which hold the firm too)."""
        pieces, params = ['"memory_note"."memory_scope" = %s'], [self.scope]
        if versions:
            pieces.append('("memory_note"."vector_seq" IS NULL OR "memory_note"."vector_seq" IS NOT NULL)')
        else:
            pieces.append('"memory_note"."firm_id" = ANY(%s)')
            params.append(list(self.firm_ids))
        if self.matter_id is None:
            pieces.append('"memory_note"."matter_id" IS NULL')
        elif self.matter_id != ANY:
            pieces.append('"memory_note"."matter_id" = %s')
            params.append(self.matter_id)
        if self.owner_id != ANY:
            pieces.append('"memory_note"."owner_id" = %s')
            params.append(self.owner_id)
        return " AND ".join(pieces), params


@dataclass(frozen=True)
class Version:
    """What changes when any note of a group is inserted, deleted or moved in or out of it."""

    generation: int | None
    count: int
    newest: int | None
    mix: int | None


@dataclass(frozen=True)
class GroupVectors:
    """One group's ids and unit-length vectors at ``version``: ``columns`` is dimensions × notes,
    the vector of ``ids[i]`` in column i. (A product over this layout streams memory twice as fast
    as over one vector per row here: 14k notes not in cache, 1.2 ms instead of 2.0;
    docs/performance.md, "Sixth round".)"""

    version: Version
    ids: tuple[UUID, ...]
    columns: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.columns.nbytes + 100 * len(self.ids)


def groups_of(alternative: Sequence, firm_ids: Sequence[int]) -> list[Group] | None:
    """The groups of one alternative of a layer rule (``layer_rules.Cond``s: scope, matter id / ids /
    None, owner id) for a searcher in ``firm_ids``, or None when it has another shape (then it is
    read in the database)."""
    values = {cond.column: cond.value for cond in alternative}
    if set(values) - {"memory_scope", "matter_id", "owner_id"} or "memory_scope" not in values:
        return None
    matter = values.get("matter_id", ANY)
    owner = values.get("owner_id", ANY)
    if owner is None or isinstance(owner, tuple):
        return None
    matters = matter if isinstance(matter, tuple) else (matter,)
    firms = tuple(sorted(firm_ids))
    return [Group(str(values["memory_scope"]), m, owner, firms) for m in matters]


class ExactVectors:
    """The kept groups of this process, least recently used first out."""

    def __init__(self) -> None:
        self._groups: OrderedDict[Group, GroupVectors] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.loads = 0  # groups (re)loaded from the database since the last clear (tests, bench)

    def current(self, groups: Iterable[Group]) -> dict[Group, GroupVectors]:
        """The vectors of ``groups`` as they are now: one statement reads every group's version;
        a group not kept or changed since is loaded (one statement for all of them)."""
        groups = list(dict.fromkeys(groups))
        versions = read_versions(groups)
        found: dict[Group, GroupVectors] = {}
        stale: list[Group] = []
        with self._lock:
            for group in groups:
                kept = self._groups.get(group)
                if kept is not None and kept.version == versions[group]:
                    self._groups.move_to_end(group)
                    found[group] = kept
                else:
                    stale.append(group)
        if stale:
            for group, loaded in zip(stale, load_groups(stale, [versions[g] for g in stale])):
                found[group] = loaded
                self._keep(group, loaded)
        return found

    def _keep(self, group: Group, loaded: GroupVectors) -> None:
        limit = settings.SEARCH_EXACT_VECTORS_MB * 1024 * 1024
        with self._lock:
            self.loads += 1
            old = self._groups.pop(group, None)
            if old is not None:
                self._bytes -= old.nbytes
            if loaded.nbytes > limit:
                return
            self._groups[group] = loaded
            self._bytes += loaded.nbytes
            while self._bytes > limit and self._groups:
                _group, evicted = self._groups.popitem(last=False)
                self._bytes -= evicted.nbytes

    @property
    def nbytes(self) -> int:
        return self._bytes

    def clear(self) -> None:
        """Forget every kept group (and the count of loads)."""
        with self._lock:
            self._groups.clear()
            self._bytes = 0
            self.loads = 0


kept_vectors = ExactVectors()
register_cached_content("kept_vectors", kept_vectors.clear)


def in_use() -> bool:
    """Whether a read on this thread's connection may use (and fill) the kept vectors: on, and
    not inside a transaction (its uncommitted rows are not for everyone)."""
    return settings.SEARCH_EXACT_VECTORS_MB > 0 and not connection.in_atomic_block


def read_versions(groups: Sequence[Group]) -> dict[Group, Version]:
    """Every group's version in ONE statement (index-only scans of the narrow version indexes)."""
    parts, params = [], []
    for index, group in enumerate(groups):
        condition, condition_params = group.condition(versions=True)
        parts.append(
            f"SELECT {index} AS i, count(*), max(vector_seq), bit_xor(vector_seq) FROM memory_note WHERE {condition}"
        )
        params += condition_params
    sql = (
        "SELECT v.*, (SELECT max(id) FROM memory_embeddinggeneration WHERE state = 'active') "
        f"FROM ({' UNION ALL '.join(parts)}) v"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    return {groups[i]: Version(generation, count, newest, mix) for i, count, newest, mix, generation in rows}


def load_groups(groups: Sequence[Group], versions: Sequence[Version]) -> list[GroupVectors]:
    """The active, embedded notes of ``groups`` (ids and vectors, binary: ``vector_send``), ONE
    statement, one row per group."""
    parts, params = [], []
    for index, group in enumerate(groups):
        condition, condition_params = group.condition()
        parts.append(
            f"SELECT {index} AS i, array_agg(id ORDER BY id), string_agg(vector_send(embedding), ''::bytea ORDER BY id) "
            f"FROM memory_note WHERE {condition} AND status = 'active' AND embedding IS NOT NULL"
        )
        params += condition_params
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        rows = {row[0]: row for row in cursor.fetchall()}
    loaded = []
    for index, version in enumerate(versions):
        _i, ids, blob = rows[index]
        loaded.append(GroupVectors(version, tuple(ids or ()), _unit_columns(bytes(blob or b""), len(ids or ()))))
    return loaded


def _unit_columns(blob: bytes, count: int) -> np.ndarray:
    """``vector_send`` rows (int16 dimensions, int16 unused, big-endian float4s) as a float32
    matrix of unit columns, one per vector (a zero vector stays zero: it is nobody's nearest)."""
    if count == 0:
        return np.zeros((0, 0), dtype=np.float32)
    raw = np.frombuffer(blob, dtype=np.uint8).reshape(count, -1)
    rows = raw[:, 4:].copy().view(">f4").astype(np.float32)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    np.divide(rows, norms, out=rows, where=norms > 0)
    columns = np.ascontiguousarray(rows.T)
    columns.setflags(write=False)
    return columns


def nearest_ids(kept: Sequence[GroupVectors], vector: np.ndarray, limit: int) -> list[UUID]:
    """The ids of the ``limit`` rows of ``kept`` nearest ``vector`` by cosine distance."""
    kept = [group for group in kept if group.ids]
    if not kept or limit <= 0:
        return []
    query = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    if norm > 0:
        query = query / norm
    similarities, owners = [], []  # each group's best, then the best of those
    for group in kept:
        similarity = query @ group.columns
        best = np.argpartition(similarity, len(similarity) - limit)[-limit:] if len(similarity) > limit \
            else np.arange(len(similarity))
        similarities.append(similarity[best])
        owners += [(group, int(i)) for i in best]
    order = np.argsort(-np.concatenate(similarities), kind="stable")[:limit]
    return [owners[i][0].ids[owners[i][1]] for i in order]
