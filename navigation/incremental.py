"""Incremental maintenance of a built navigation graph: notes inserted and removed HNSW-style.

A full rebuild is costly (the candidate search is O(n²·d); figures: bench/bench_navigation.py), so a graph
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
  is made connected again with the build's bridge rule (``graph.connect_components``).

Pure numpy and Python: no database. The result keeps the build's invariants (degree ≤ M / M0,
every level non-empty and connected, merged edges, aligned arrays) but is not, edge for edge,
the graph a full build of the same notes gives: it depends on the order notes came in.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from navigation.graph import (
    Edge,
    GraphInput,
    LayoutBasis,
    NavGraph,
    connect_components,
    connected_components,
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
    """The build's level rule (docs/navigation.md, Build): promote while SHA-1(id:level) < 1/M, up to max_level."""
    level = 0
    while level < max_level and stable_unit(f"{note_id}:{level}") < 1.0 / m:
        level += 1
    return level


def apply_delta(graph: NavGraph, removed: Sequence[str], added: GraphInput, limits: IncrementalLimits) -> NavGraph:
    """A new graph: ``graph`` without the ``removed`` ids and with the ``added`` notes (an id in
    both is a changed note: out with the old content, in with the new). ``graph`` is not modified,
    so requests still reading it are unaffected. Call ``incremental_blocker`` first."""
    by_id = sorted(range(len(added.ids)), key=lambda i: added.ids[i])  # same notes, same graph, in any order
    added = GraphInput([added.ids[i] for i in by_id], np.asarray(added.vectors)[by_id] if by_id else added.vectors,
                       [added.tokens[i] for i in by_id], [added.importance[i] for i in by_id])
    work = _Work(graph, added, limits)
    leaving = set(removed) | (set(added.ids) & graph.index_of.keys())  # a re-added id is a change
    for note_id in sorted(leaving):
        index = graph.index_of.get(note_id)
        if index is not None:
            work.remove(index)
    work.ensure_top_level()
    for offset in range(len(added.ids)):
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
        self.base = graph
        # Changed neighbourhoods only: over[level][node] = {neighbour: score}; any other node's
        # neighbours are still those of the base graph (copy-on-write, O(change) not O(n)).
        self.over: list[dict[int, dict[int, float]]] = [dict() for _ in range(self.max_level + 1)]
        self.dirty: set[tuple[int, int]] = set()  # pairs whose edge changed on some level
        self.bridged: set[tuple[int, int]] = set()  # pairs made bridges here
        self.touched: set[int] = set()

    # --- small helpers --------------------------------------------------------------------

    def cap(self, level: int) -> int:
        return self.params.m0 if level == 0 else self.params.m

    def score(self, a: int, b: int) -> float:
        """The build's pair score: (1-λ)·cos + λ·Jaccard."""
        return (1 - self.lam) * float(self.vectors[a] @ self.vectors[b]) + self.lam * jaccard(self.tokens[a], self.tokens[b])

    def neighbours(self, level: int, node: int) -> dict[int, float]:
        own = self.over[level].get(node)
        if own is not None:
            return own
        if node >= self.old_size:
            return {}
        edges = self.base.edges
        return {other: edges[index].score for other, index in self.base.adjacency[level].get(node, ())}

    def neighbour_ids(self, level: int, node: int):
        own = self.over[level].get(node)
        if own is not None:
            return own.keys()
        if node >= self.old_size:
            return ()
        return [other for other, _index in self.base.adjacency[level].get(node, ())]

    def own(self, level: int, node: int) -> dict[int, float]:
        found = self.over[level].get(node)
        if found is None:
            found = self.over[level][node] = self.neighbours(level, node)
        return found

    def link(self, level: int, a: int, b: int, score: float, *, bridge: bool = False) -> None:
        self.own(level, a)[b] = score
        self.own(level, b)[a] = score
        pair = (min(a, b), max(a, b))
        self.dirty.add(pair)
        if bridge:
            self.bridged.add(pair)
        self.touched.add(level)

    def unlink(self, level: int, a: int, b: int) -> None:
        self.own(level, a).pop(b, None)
        self.own(level, b).pop(a, None)
        self.dirty.add((min(a, b), max(a, b)))
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
            former = dict(self.neighbours(level, node))
            for other in former:
                self.unlink(level, node, other)
            self.over[level][node] = {}
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
                for a in members.tolist()
                for b, score in self.neighbours(level, a).items() if a < b
            }
            before = dict(chosen)
            bridges = connect_components(self.vectors, members, chosen, self.cap(level), self.params)
            for pair in before.keys() - chosen.keys():
                self.unlink(level, *pair)
            for pair in chosen.keys() - before.keys():
                self.link(level, pair[0], pair[1], chosen[pair], bridge=pair in bridges)

    def components(self, level: int, members: np.ndarray) -> int:
        """How many connected components ``level`` has over ``members``."""
        return len(connected_components(members.tolist(), lambda node: self.neighbour_ids(level, node)))

    # --- back to a NavGraph ----------------------------------------------------------------------

    def assemble(self, graph: NavGraph, *, changes: int) -> NavGraph:
        """The new graph, touching only what changed: kept notes keep their index, new notes fill
        the slots of removed ones (then go at the end), and if more were removed than added the
        last notes move into the remaining slots. Edges likewise keep their index unless they
        changed; the adjacency lists of the nodes concerned are rebuilt, the rest is shared."""
        n_final = int(self.alive.sum())
        holes = [int(i) for i in np.flatnonzero(~self.alive[:n_final])]
        movers = [int(i) for i in np.flatnonzero(self.alive) if i >= n_final]
        position = dict(zip(movers, holes))  # work index → final index, for nodes that move
        order = np.arange(n_final)  # final index → work index
        for mover, hole in position.items():
            order[hole] = mover
        final = position.get

        dirty = set(self.dirty)
        for mover in movers:  # every edge of a node that moves changes its ends
            for level in range(int(self.levels[mover]) + 1):
                dirty.update((min(mover, other), max(mover, other)) for other in self.neighbour_ids(level, mover))

        edges = list(graph.edges)
        pair_index: dict[tuple[int, int], int] = {}
        free: list[int] = []
        fresh: list[tuple[tuple[int, int], Edge]] = []
        for a, b in sorted(dirty):
            old_index = self.base_edge(a, b)
            levels = [level for level in range(min(int(self.levels[a]), int(self.levels[b])) + 1)
                      if self.alive[a] and self.alive[b] and b in self.neighbours(level, a)]
            if not levels:
                if old_index is not None:
                    free.append(old_index)
                continue
            score = max(round(self.neighbours(level, a)[b], 6) for level in levels)
            bridge = (a, b) in self.bridged or (old_index is not None and graph.edges[old_index].bridge)
            fa, fb = final(a, a), final(b, b)
            edge = Edge(min(fa, fb), max(fa, fb), score, levels, bridge)
            if old_index is not None:
                edges[old_index] = edge
                pair_index[(a, b)] = old_index
            else:
                fresh.append(((a, b), edge))
        free.sort()
        moved_edges: dict[int, int] = {}
        for pair, edge in fresh:
            if free:
                index = free.pop(0)
                edges[index] = edge
            else:
                index = len(edges)
                edges.append(edge)
            pair_index[pair] = index
        free_set = set(free)
        for hole in sorted(free):  # more edges went than came: the last edges move into the free slots
            while edges and len(edges) - 1 in free_set:
                free_set.discard(len(edges) - 1)
                edges.pop()
            if hole not in free_set:
                continue
            last = len(edges) - 1
            edges[hole] = edges.pop()
            moved_edges[last] = hole
            free_set.discard(hole)
        pair_index = {pair: moved_edges.get(index, index) for pair, index in pair_index.items()}

        # Nodes whose adjacency lists change: ends of changed or moved edges, moved and removed nodes.
        concerned: set[int] = {a for pair in dirty for a in pair}
        by_final = {final(w, w): w for w in movers}
        for new_index in moved_edges.values():
            edge = edges[new_index]
            concerned.update((by_final.get(edge.source, edge.source), by_final.get(edge.target, edge.target)))
        adjacency = [dict(level_index) for level_index in graph.adjacency]
        for w in concerned | set(movers) | set(np.flatnonzero(~self.alive[: self.old_size]).tolist()):
            if w < self.old_size:
                for level in range(int(graph.levels[w]) + 1):
                    adjacency[level].pop(w, None)
        for w in concerned | set(movers):
            if not self.alive[w]:
                continue
            fw = final(w, w)
            for level in range(int(self.levels[w]) + 1):
                entries = []
                for other in self.neighbour_ids(level, w):
                    pair = (min(w, other), max(w, other))
                    index = pair_index.get(pair)
                    if index is None:  # unchanged edge between nodes that stay
                        index = self.base_edge(*pair)
                        index = moved_edges.get(index, index)
                    entries.append((final(other, other), index))
                if entries:
                    entries.sort(key=lambda item: item[1])
                    adjacency[level][fw] = entries
                else:
                    adjacency[level].pop(fw, None)

        ids = [self.ids[w] for w in order.tolist()]
        index_of = dict(graph.index_of)
        for w in np.flatnonzero(~self.alive[: self.old_size]).tolist():
            index_of.pop(self.ids[w], None)
        for w, fw in position.items():
            if w < self.old_size:
                index_of.pop(self.ids[w], None)
        for w, fw in position.items():
            index_of[self.ids[w]] = fw
        for w in range(self.old_size, len(self.ids)):  # new notes that did not need to move
            if self.alive[w] and w < n_final:
                index_of[self.ids[w]] = w
        layout, basis = self.place(graph, order)
        n = len(ids)
        return NavGraph(
            params=graph.params,
            ids=ids,
            index_of=index_of,
            vectors=self.vectors[order],
            tokens=[self.tokens[w] for w in order.tolist()],
            levels=self.levels[order],
            max_level=self.max_level,
            entry=final(self.entry, self.entry),
            edges=edges,
            adjacency=adjacency,
            layout=layout,
            order=np.lexsort((np.arange(n), layout[:, 0])),
            importance=[self.importance[w] for w in order.tolist()],
            basis=basis,
            changes_since_build=graph.changes_since_build + changes,
        )

    def base_edge(self, a: int, b: int) -> int | None:
        """The index of the a–b edge in the base graph, if there was one."""
        if a >= self.old_size or b >= self.old_size:
            return None
        for level in range(min(int(self.base.levels[a]), int(self.base.levels[b])) + 1):
            for other, index in self.base.adjacency[level].get(a, ()):
                if other == b:
                    return index
        return None

    def place(self, graph: NavGraph, order: np.ndarray) -> tuple[np.ndarray, LayoutBasis]:
        """Kept notes keep their place; a new note goes where its projection on the stored
        principal axes falls among the others' (interpolated), so the page does not jump."""
        basis = graph.basis
        assert basis is not None
        old_kept = np.flatnonzero(self.alive[: self.old_size])
        new = np.arange(self.old_size, len(self.ids))
        projection = np.zeros((len(self.ids), 2))
        layout = np.zeros((len(self.ids), 2))
        projection[: self.old_size] = basis.projection
        layout[: self.old_size] = graph.layout
        if len(new):
            projection[new] = (self.vectors[new] - basis.centre) @ basis.axes.T
            for dim in range(2):
                ranked = np.argsort(projection[old_kept, dim], kind="stable")
                layout[new, dim] = np.interp(projection[new, dim], projection[old_kept, dim][ranked],
                                             layout[old_kept, dim][ranked])
        return layout[order], LayoutBasis(basis.centre, basis.axes, projection[order])
