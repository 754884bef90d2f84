"""Incremental maintenance of a built navigation graph: notes inserted and removed HNSW-style.

Rebuilding 10k notes from scratch takes seconds (the candidate search is O(n²·d)), so a graph
whose notes changed gets only the difference:

- a removed note leaves with its edges; on each of its levels its former neighbours are
  reconnected among themselves (best pairs first, while both have a free slot);
- a new note gets its level from the build's SHA-1 rule, is found a place by a greedy descent
  from the entry point and an ef_construction beam on each of its levels, picks its neighbours
  with the build's diversity heuristic and score ((1-λ)·cos + λ·Jaccard), and connects while
  the degree bound holds: a full neighbour gives up its weakest edge only for a better one,
  and never the last edge of the note at the other end;
- a level left without a note of its own gets one promoted as the build does (the most
  important note below it), the entry point follows the build's rule, and every level touched
  is made connected again with the build's bridge rule (``graph._connect``).

Pure numpy and Python: no database. The result keeps the build's invariants (degree ≤ M / M0,
every level non-empty and connected, merged edges, aligned arrays) but is not, edge for edge,
the graph a full build of the same notes gives: it depends on the order notes came in.
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from navigation.graph import (
    GraphInput,
    LayoutBasis,
    NavGraph,
    _connect,
    assemble_graph,
    choose_entry,
    jaccard,
    max_level_for,
    stable_unit,
)


@dataclass(frozen=True)
class IncrementalLimits:
    ef_construction: int = 32  # beam width when a note is inserted (NAV_EF_CONSTRUCTION)
    max_fraction: float = 0.2  # a larger change (notes removed + added, of n) → full build
    count_drift: bool = False  # also count the changes since the last full build (background refresh)


def incremental_blocker(graph: NavGraph, removed: int, added: int, limits: IncrementalLimits) -> str | None:
    """Why this change needs a full build instead of an incremental update (None: it does not)."""
    remaining = graph.size - removed + added
    if graph.size < 3 or graph.basis is None or remaining < 3 or removed >= graph.size:
        return "too few notes for an incremental update"
    if max_level_for(remaining, graph.params.m) != graph.max_level:
        return "the number of levels changes"
    if removed + added > limits.max_fraction * graph.size:
        return f"{removed + added} changed notes are more than {limits.max_fraction:.0%} of {graph.size}"
    if limits.count_drift and graph.changes_since_build + removed + added > limits.max_fraction * graph.size:
        return "the graph has drifted from a full build long enough"
    return None


def new_level(note_id: str, max_level: int, m: int) -> int:
    """The build's rule (seed 000 §4.1): promote while SHA-1(id:level) < 1/M, up to max_level."""
    level = 0
    while level < max_level and stable_unit(f"{note_id}:{level}") < 1.0 / m:
        level += 1
    return level


def apply_delta(graph: NavGraph, removed: Sequence[str], added: GraphInput, limits: IncrementalLimits) -> NavGraph:
    """A new graph: ``graph`` without the ``removed`` ids and with the ``added`` notes (an id in
    both is a changed note: out with the old content, in with the new). ``graph`` is not modified,
    so requests still reading it are unaffected. Call ``incremental_blocker`` first."""
    work = _Work(graph, added, limits)
    leaving = set(removed) | (set(added.ids) & graph.index_of.keys())  # a re-added id is a change
    for note_id in sorted(leaving):
        index = graph.index_of.get(note_id)
        if index is not None:
            work.remove(index)
    work.ensure_top_level()
    for offset in sorted(range(len(added.ids)), key=lambda i: added.ids[i]):
        node = graph.size + offset
        work.insert(node, new_level(added.ids[offset], work.max_level, work.params.m))
    work.ensure_every_level()
    work.repair_connectivity()
    return work.assemble(graph, changes=len(leaving) + len(added.ids))


class _Work:
    """The graph being changed: nodes old then new (``alive`` marks those kept), and per level
    ``adj[level][node] = {neighbour: score}`` plus that level's bridge pairs."""

    def __init__(self, graph: NavGraph, added: GraphInput, limits: IncrementalLimits) -> None:
        self.params = graph.params
        self.limits = limits
        self.lam = graph.params.lexical_weight
        self.old_size = graph.size
        self.ids = list(graph.ids) + list(added.ids)
        new_vectors = np.asarray(added.vectors, dtype=np.float32).reshape(len(added.ids), graph.vectors.shape[1])
        self.vectors = np.ascontiguousarray(np.vstack([graph.vectors, new_vectors])) if len(added.ids) else graph.vectors
        self.tokens = list(graph.tokens) + list(added.tokens)
        self.importance = list(graph.importance) + [float(v) for v in added.importance]
        self.levels = np.concatenate([graph.levels, np.full(len(added.ids), -1, dtype=np.int64)])
        self.alive = np.concatenate([np.ones(graph.size, dtype=bool), np.zeros(len(added.ids), dtype=bool)])
        self.max_level = graph.max_level
        self.entry = graph.entry
        self.adj: list[dict[int, dict[int, float]]] = [dict() for _ in range(self.max_level + 1)]
        self.bridges: list[set[tuple[int, int]]] = [set() for _ in range(self.max_level + 1)]
        for edge in graph.edges:
            for level in edge.levels:
                self.adj[level].setdefault(edge.source, {})[edge.target] = edge.score
                self.adj[level].setdefault(edge.target, {})[edge.source] = edge.score
                if edge.bridge:
                    self.bridges[level].add((edge.source, edge.target))
        self.touched: set[int] = set()

    # --- small helpers --------------------------------------------------------------------

    def cap(self, level: int) -> int:
        return self.params.m0 if level == 0 else self.params.m

    def score(self, a: int, b: int) -> float:
        """The build's pair score: (1-λ)·cos + λ·Jaccard."""
        return (1 - self.lam) * float(self.vectors[a] @ self.vectors[b]) + self.lam * jaccard(self.tokens[a], self.tokens[b])

    def neighbours(self, level: int, node: int) -> dict[int, float]:
        return self.adj[level].get(node, {})

    def link(self, level: int, a: int, b: int, score: float, *, bridge: bool = False) -> None:
        self.adj[level].setdefault(a, {})[b] = score
        self.adj[level].setdefault(b, {})[a] = score
        if bridge:
            self.bridges[level].add((min(a, b), max(a, b)))
        self.touched.add(level)

    def unlink(self, level: int, a: int, b: int) -> None:
        self.adj[level][a].pop(b, None)
        self.adj[level][b].pop(a, None)
        self.bridges[level].discard((min(a, b), max(a, b)))
        self.touched.add(level)

    def rank_key(self, node: int) -> tuple[float, float]:
        """The build's promotion and entry order: importance, then the id's hash."""
        return (self.importance[node], stable_unit(f"{self.ids[node]}:promote"))

    def members(self, level: int) -> np.ndarray:
        return np.flatnonzero(self.alive & (self.levels >= level))

    # --- removal ------------------------------------------------------------------------------

    def remove(self, node: int) -> None:
        """Drop the node and its edges; reconnect its former neighbours among themselves."""
        self.alive[node] = False
        for level in range(int(self.levels[node]) + 1):
            former = self.adj[level].pop(node, {})
            for other in former:
                self.adj[level][other].pop(node, None)
                self.bridges[level].discard((min(node, other), max(node, other)))
            self.touched.add(level)
            self.reconnect(level, sorted(former))
        if node == self.entry:
            self.entry = -1

    def reconnect(self, level: int, nodes: list[int]) -> None:
        """Best pairs among ``nodes`` first, while both ends have a free slot."""
        cap = self.cap(level)
        pairs = sorted(
            ((self.score(a, b), a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:]
             if b not in self.neighbours(level, a)),
            key=lambda item: (-item[0], item[1], item[2]),
        )
        for value, a, b in pairs:
            if len(self.neighbours(level, a)) < cap and len(self.neighbours(level, b)) < cap:
                self.link(level, a, b, value)

    # --- insertion ------------------------------------------------------------------------------

    def insert(self, node: int, level: int, *, from_level: int = 0) -> None:
        """HNSW insert of ``node`` on levels ``from_level``…``level`` (a promotion starts above
        the node's old level): greedy descent from the entry point, then per level an
        ef_construction beam, the diversity heuristic, and degree-bounded connections."""
        self.alive[node] = True
        self.levels[node] = level
        memo: dict[int, float] = {}

        def score(other: int) -> float:
            value = memo.get(other)
            if value is None:
                value = memo[other] = self.score(node, other)
            return value

        current = self.entry
        for upper in range(self.max_level, level, -1):
            current = self.greedy(upper, current, score)
        starts = [current]
        for layer in range(level, from_level - 1, -1):
            starts = [s for s in starts if s != node and self.alive[s] and self.levels[s] >= layer]
            if not starts:
                starts = self.nearest_members(node, layer)
            found = self.search_layer(node, starts, layer, score)
            chosen = self.select(found, layer)
            for value, other in chosen:
                self.connect(layer, node, other, value)
            self.touched.add(layer)
            starts = [other for _value, other in found] or starts

    def greedy(self, level: int, start: int, score) -> int:
        current, best = start, score(start)
        improved = True
        while improved:
            improved = False
            for other in self.neighbours(level, current):
                value = score(other)
                if value > best:
                    current, best, improved = other, value, True
        return current

    def nearest_members(self, node: int, level: int) -> list[int]:
        """A start for a level the descent did not reach (a promoted node): the level's note
        closest to ``node`` by cosine (upper levels are small, so this is one matrix product)."""
        members = self.members(level)
        members = members[members != node]
        if not len(members):
            return []
        return [int(members[int(np.argmax(self.vectors[members] @ self.vectors[node]))])]

    def search_layer(self, node: int, starts: list[int], level: int, score) -> list[tuple[float, int]]:
        """HNSW search_layer: best-first from ``starts`` keeping the ef_construction best."""
        ef = self.limits.ef_construction
        seen = set(starts) | {node}
        candidates = [(-score(s), s) for s in starts]
        heapq.heapify(candidates)
        kept = [(score(s), s) for s in starts]
        heapq.heapify(kept)
        while len(kept) > ef:
            heapq.heappop(kept)
        while candidates:
            neg, current = heapq.heappop(candidates)
            if len(kept) >= ef and -neg < kept[0][0]:
                break
            for other in self.neighbours(level, current):
                if other in seen:
                    continue
                seen.add(other)
                value = score(other)
                if len(kept) < ef or value > kept[0][0]:
                    heapq.heappush(candidates, (-value, other))
                    heapq.heappush(kept, (value, other))
                    if len(kept) > ef:
                        heapq.heappop(kept)
        return sorted(kept, key=lambda item: (-item[0], self.ids[item[1]]))

    def select(self, found: list[tuple[float, int]], level: int) -> list[tuple[float, int]]:
        """The build's diversity heuristic over the best 3·cap candidates (a candidate is kept when
        it is closer to the new note than to every neighbour already kept), then the best of the
        rest while slots remain (HNSW's keepPrunedConnections)."""
        cap = self.cap(level)
        options = found[: 3 * cap]
        kept: list[tuple[float, int]] = []
        pruned: list[tuple[float, int]] = []
        for value, other in options:
            if len(kept) < cap and not any(float(self.vectors[other] @ self.vectors[k]) > value for _v, k in kept):
                kept.append((value, other))
            else:
                pruned.append((value, other))
        return kept + pruned[: cap - len(kept)]

    def connect(self, level: int, node: int, other: int, value: float) -> None:
        """Add node–other unless a bound is hit: a full ``other`` drops its weakest edge only for a
        better one, and never one whose far end would be left without an edge."""
        cap = self.cap(level)
        if len(self.neighbours(level, node)) >= cap:
            return
        current = self.neighbours(level, other)
        if len(current) >= cap:
            weakest = min(
                ((score, far) for far, score in current.items() if len(self.neighbours(level, far)) > 1),
                key=lambda item: (item[0], self.ids[item[1]]),
                default=None,
            )
            if weakest is None or weakest[0] >= value:
                return
            self.unlink(level, other, weakest[1])
        self.link(level, node, other, value)

    # --- levels, entry point, connectivity -----------------------------------------------------

    def promote(self, node: int, level: int) -> None:
        old = int(self.levels[node])
        self.insert(node, level, from_level=old + 1)

    def ensure_top_level(self) -> None:
        """The top level keeps a note (promote the most important one below), and the entry point
        is the build's choice among the top level's notes."""
        if not self.members(self.max_level).size:
            below = self.members(0)
            best = max(below.tolist(), key=self.rank_key)
            self.entry = best  # alone on the top level: it is the entry the descent starts from
            self.promote(best, self.max_level)
        if self.entry < 0 or not self.alive[self.entry]:
            self.entry = max(self.members(self.max_level).tolist(), key=self.rank_key)

    def ensure_every_level(self) -> None:
        """As the build: every level 1…max-1 has a note whose top level it is (else the most
        important note below it is promoted); then the entry point by the build's rule."""
        self.ensure_top_level()
        alive_levels = self.levels[self.alive]
        for level in range(self.max_level - 1, 0, -1):
            if np.any(alive_levels == level):
                continue
            below = np.flatnonzero(self.alive & (self.levels < level)).tolist()
            if below:
                self.promote(max(below, key=self.rank_key), level)
                alive_levels = self.levels[self.alive]
        top = self.members(self.max_level).tolist()
        self.entry = max(top, key=self.rank_key)

    def repair_connectivity(self) -> None:
        """Every level touched is made connected again with the build's bridge rule."""
        for level in sorted(self.touched):
            members = self.members(level)
            if len(members) < 2 or self.components(level, members) <= 1:
                continue
            chosen = {
                (a, b): score
                for a, others in self.adj[level].items() if self.alive[a]
                for b, score in others.items() if a < b
            }
            before = dict(chosen)
            bridges = _connect(self.vectors, members, chosen, self.cap(level), self.params)
            for pair in before.keys() - chosen.keys():
                self.unlink(level, *pair)
            for pair in chosen.keys() - before.keys():
                self.link(level, pair[0], pair[1], chosen[pair], bridge=pair in bridges)

    def components(self, level: int, members: np.ndarray) -> int:
        seen: set[int] = set()
        count = 0
        for start in members.tolist():
            if start in seen:
                continue
            count += 1
            seen.add(start)
            queue = deque([start])
            while queue:
                current = queue.popleft()
                for other in self.neighbours(level, current):
                    if other not in seen:
                        seen.add(other)
                        queue.append(other)
        return count

    # --- back to a NavGraph ----------------------------------------------------------------------

    def assemble(self, graph: NavGraph, *, changes: int) -> NavGraph:
        """Compact to the kept notes sorted by id (as the build orders them) and assemble."""
        kept = sorted(np.flatnonzero(self.alive).tolist(), key=self.ids.__getitem__)
        remap = [-1] * len(self.ids)
        for new, old in enumerate(kept):
            remap[old] = new
        ids = [self.ids[i] for i in kept]
        per_level: dict[int, dict[tuple[int, int], float]] = {}
        bridges: dict[int, set[tuple[int, int]]] = {}
        for level in range(self.max_level + 1):
            pairs: dict[tuple[int, int], float] = {}
            for a, others in self.adj[level].items():
                na = remap[a]
                if na < 0:
                    continue
                for b, score in others.items():
                    nb = remap[b]
                    if na < nb:
                        pairs[(na, nb)] = score
            per_level[level] = pairs
            bridges[level] = {
                (min(remap[a], remap[b]), max(remap[a], remap[b]))
                for a, b in self.bridges[level] if remap[a] >= 0 and remap[b] >= 0
            }
        layout, basis = self.place(graph, kept)
        levels = self.levels[kept]
        importance = [self.importance[i] for i in kept]
        entry = remap[self.entry]
        return assemble_graph(
            graph.params, ids, self.vectors[kept], [self.tokens[i] for i in kept], importance, levels,
            self.max_level, entry, per_level, bridges, layout, basis,
            changes_since_build=graph.changes_since_build + changes,
        )

    def place(self, graph: NavGraph, kept: list[int]) -> tuple[np.ndarray, LayoutBasis]:
        """Kept notes keep their place; a new note goes where its projection on the stored
        principal axes falls among the others' (interpolated), so the page does not jump."""
        basis = graph.basis
        assert basis is not None
        old = np.array([i for i in kept if i < self.old_size], dtype=np.int64)
        new = np.array([i for i in kept if i >= self.old_size], dtype=np.int64)
        projection = np.zeros((self.vectors.shape[0], 2))
        layout = np.zeros((self.vectors.shape[0], 2))
        projection[old] = basis.projection[old]
        layout[old] = graph.layout[old]
        if len(new):
            projection[new] = (self.vectors[new] - basis.centre) @ basis.axes.T
            for dim in range(2):
                order = np.argsort(projection[old, dim], kind="stable")
                layout[new, dim] = np.interp(projection[new, dim], projection[old, dim][order], layout[old, dim][order])
        return layout[kept], LayoutBasis(basis.centre, basis.axes, projection[kept])
