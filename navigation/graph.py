"""The HNSW-style navigation graph and its real search trace (docs/navigation.md).

Pure numpy and Python over arrays: no database, no Django. ``build_graph`` turns the
notes a user may see into levels and per-level edges; ``trace`` runs the search the
page highlights. This is an explanation layer over the notes, not a replacement for
the pgvector index (docs/navigation.md): levels come from a hash, neighbours are chosen
greedily under a degree bound, and L0 is made connected with bridge edges.
"""
from __future__ import annotations

import hashlib
import heapq
import math
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np


@dataclass(frozen=True)
class GraphParams:
    """The graph's parameters (navigation/tuning.py), returned with every graph."""

    m: int = 4
    m0: int = 4
    ef_search: int = 16
    lexical_weight: float = 0.25
    candidates: int = 8

    @property
    def level_mult(self) -> float:
        return 1.0 / math.log(self.m)

    def as_dict(self) -> dict:
        return {
            "M": self.m,
            "M0": self.m0,
            "EF_SEARCH": self.ef_search,
            "HNSW_LEVEL_MULT": round(self.level_mult, 6),
            "lexical_weight": self.lexical_weight,
            "candidates_per_node": self.candidates,
        }


@dataclass
class GraphInput:
    """What the build needs of each note, aligned by index."""

    ids: list[str]
    vectors: np.ndarray  # (n, d), rows L2-normalised
    tokens: list[frozenset[str]]
    importance: list[float]


@dataclass
class Edge:
    source: int
    target: int
    score: float
    levels: list[int]
    bridge: bool = False


@dataclass
class NavGraph:
    """Levels, merged edges and the adjacency index adjacency[level][node] → [(node, edge)]."""

    params: GraphParams
    ids: list[str]
    index_of: dict[str, int]
    vectors: np.ndarray
    tokens: list[frozenset[str]]
    levels: np.ndarray
    max_level: int
    entry: int
    edges: list[Edge]
    adjacency: list[dict[int, list[tuple[int, int]]]]
    layout: np.ndarray  # (n, 2) in [0, 1]: x shared by all levels, y within a band
    order: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # by layout x
    importance: list[float] = field(default_factory=list)  # promotion and entry-point rule
    basis: "LayoutBasis | None" = None  # the principal axes the layout was computed on
    changes_since_build: int = 0  # notes inserted or removed incrementally since the last full build

    @property
    def size(self) -> int:
        return len(self.ids)

    def degree(self, level: int, node: int) -> int:
        return len(self.adjacency[level].get(node, ()))


def stable_unit(text: str) -> float:
    """SHA-1 of ``text`` mapped to [0, 1): the same input always gives the same number."""
    digest = hashlib.sha1(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def max_level_for(count: int, m: int) -> int:
    """Top level for ``count`` notes: floor(ln(count) · 1/ln M) (0 for one note)."""
    if count <= 1:
        return 0
    return int(math.floor(math.log(count) / math.log(m) + 1e-9))


def assign_levels(ids: Sequence[str], importance: Sequence[float], max_level: int, m: int) -> list[int]:
    """Levels (docs/navigation.md, Build): promote while SHA-1(id:level) < 1/M; then make every level non-empty
    by promoting the most important note still below it (ties broken by the id's hash)."""
    p = 1.0 / m
    levels = []
    for note_id in ids:
        level = 0
        while level < max_level and stable_unit(f"{note_id}:{level}") < p:
            level += 1
        levels.append(level)
    if not ids:
        return levels

    def rank(i: int) -> tuple[float, float]:
        return (float(importance[i]), stable_unit(f"{ids[i]}:promote"))

    if max(levels) < max_level:
        levels[max(range(len(ids)), key=rank)] = max_level
    for level in range(max_level - 1, 0, -1):
        if any(value == level for value in levels):
            continue
        below = [i for i, value in enumerate(levels) if value < level]
        if below:
            levels[max(below, key=rank)] = level
    return levels


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter) if inter else 0.0


def _vector_candidates(vectors: np.ndarray, members: np.ndarray, per_node: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``per_node`` cosine neighbours of each member among the members, blockwise
    (argpartition per block of rows, never an n×n matrix in memory)."""
    n = len(members)
    k = min(per_node, n - 1)
    sub = vectors[members]
    rows, cols = [], []
    block = 1024
    for start in range(0, n, block):
        sims = sub[start:start + block] @ sub.T
        local = np.arange(sims.shape[0])
        sims[local, start + local] = -np.inf
        top = np.argpartition(sims, n - k, axis=1)[:, n - k:] if k < n - 1 else np.argsort(-sims, axis=1)[:, :k]
        rows.append(np.repeat(start + local, k))
        cols.append(top.reshape(-1))
    return np.concatenate(rows), np.concatenate(cols)


def _lexical_candidates(tokens: list[frozenset[str]], members: np.ndarray, per_token: int = 6,
                        rare_tokens: int = 3) -> list[tuple[int, int]]:
    """Pairs sharing one of each member's rarest tokens (inverted index; common tokens skipped)."""
    postings: dict[str, list[int]] = {}
    for local, node in enumerate(members):
        for token in tokens[node]:
            postings.setdefault(token, []).append(local)
    cap = max(per_token * 4, int(len(members) ** 0.5))
    pairs = []
    for local, node in enumerate(members):
        shared = sorted(
            (t for t in tokens[node] if 1 < len(postings[t]) <= cap), key=lambda t: (len(postings[t]), t)
        )[:rare_tokens]
        for token in shared:
            count = 0
            for other in postings[token]:
                if other != local:
                    pairs.append((local, other))
                    count += 1
                    if count >= per_token:
                        break
    return pairs


def _level_edges(vectors: np.ndarray, tokens: list[frozenset[str]], members: np.ndarray,
                 cap: int, params: GraphParams) -> dict[tuple[int, int], float]:
    """Edges for one level (docs/navigation.md, Build): candidates by vector and lexical similarity, scored
    (1-λ)·cos + λ·Jaccard, added best-first while both ends have degree < cap."""
    if len(members) < 2:
        return {}
    rows, cols = _vector_candidates(vectors, members, params.candidates)
    lexical = np.array(_lexical_candidates(tokens, members), dtype=np.int64).reshape(-1, 2)
    first = np.concatenate([rows, lexical[:, 0]])
    second = np.concatenate([cols, lexical[:, 1]])
    low, high = np.minimum(first, second), np.maximum(first, second)
    keys = np.unique(low * len(members) + high)  # sorted, de-duplicated undirected pairs
    if len(keys) == 0:
        return {}
    pair_array = np.column_stack([keys // len(members), keys % len(members)])
    sub = vectors[members]
    cos = np.einsum("ij,ij->i", sub[pair_array[:, 0]], sub[pair_array[:, 1]])
    lam = params.lexical_weight
    member_tokens = [tokens[m] for m in members.tolist()]
    lex = np.array([jaccard(member_tokens[a], member_tokens[b]) for a, b in pair_array.tolist()])
    score = (1 - lam) * cos + lam * lex
    ranked = _diverse_ranks(sub, pair_array, score, cap)
    # Round-robin over the heuristic's ranks (every node's first choice before anyone's
    # second), best score first within a round, ties by ids: a node whose favourite
    # neighbours fill up early still keeps its own best diverse edge.
    order = np.lexsort((pair_array[:, 1], pair_array[:, 0], -score, ranked))
    degree = [0] * len(members)
    chosen: dict[tuple[int, int], float] = {}
    pair_list, score_list, member_list = pair_array.tolist(), score.tolist(), members.tolist()
    for i in order.tolist():
        a, b = pair_list[i]
        if degree[a] >= cap or degree[b] >= cap:
            continue
        chosen[(member_list[a], member_list[b])] = score_list[i]
        degree[a] += 1
        degree[b] += 1
    return chosen


def _diverse_ranks(sub: np.ndarray, pairs: np.ndarray, score: np.ndarray, cap: int) -> np.ndarray:
    """HNSW's neighbour heuristic per node: walking its candidates best-first, a candidate is
    chosen only when it is closer to the node than to every neighbour already chosen (the few
    edges a degree bound allows go in different directions). Returns, per pair, the best
    rank either end gave it (0 = someone's first choice; ``cap`` and up = not chosen)."""
    by_node: dict[int, list[tuple[float, int, int]]] = {}
    for index, ((a, b), value) in enumerate(zip(pairs.tolist(), score.tolist())):
        by_node.setdefault(a, []).append((-value, b, index))
        by_node.setdefault(b, []).append((-value, a, index))
    rank = [10 * cap] * len(pairs)
    for node, options in by_node.items():
        options.sort()
        options = options[: 3 * cap]
        others = [other for _neg, other, _index in options]
        gram = (sub[others] @ sub[others].T).tolist()  # one small product per node
        kept: list[int] = []  # positions in ``options``
        for position, (neg, _other, index) in enumerate(options):
            if len(kept) < cap and not (kept and max(gram[position][j] for j in kept) > -neg):
                rank[index] = min(rank[index], len(kept))
                kept.append(position)
            else:
                rank[index] = min(rank[index], cap + position)
    return np.array(rank, dtype=np.int64)


def connected_components(nodes: Iterable[int], neighbours: Callable[[int], Iterable[int]]) -> list[list[int]]:
    """The connected components of the graph over ``nodes`` whose edges ``neighbours(node)``
    gives (breadth-first). Each lists its nodes in the order of ``nodes``; the components come
    in the order of their first node. The one implementation for the graph, the incremental
    update and the tests."""
    order = list(nodes)
    root: dict[int, int] = {}
    for start in order:
        if start in root:
            continue
        root[start] = start
        queue = deque([start])
        while queue:
            for other in neighbours(queue.popleft()):
                if other not in root:
                    root[other] = start
                    queue.append(other)
    groups: dict[int, list[int]] = {}
    for node in order:
        groups.setdefault(root[node], []).append(node)
    return list(groups.values())


def connect_components(vectors: np.ndarray, members: np.ndarray, chosen: dict[tuple[int, int], float],
             cap: int, params: GraphParams) -> set[tuple[int, int]]:
    """Connectivity (docs/navigation.md, Build): join every component to the largest one with its most similar free
    pair (degree < cap on both ends); a component without a free node gives up its weakest
    edge first. Returns the bridge edges added (they are also put into ``chosen``)."""
    bridges: set[tuple[int, int]] = set()
    if len(members) < 2:
        return bridges
    for _round in range(4 * len(members)):
        linked: dict[int, list[int]] = {}
        for a, b in chosen:
            linked.setdefault(a, []).append(b)
            linked.setdefault(b, []).append(a)
        groups = connected_components(members.tolist(), lambda node: linked.get(node, ()))
        if len(groups) <= 1:
            return bridges
        degree: dict[int, int] = {int(n): 0 for n in members}
        for a, b in chosen:
            degree[a] += 1
            degree[b] += 1
        components = sorted(groups, key=lambda g: (-len(g), min(g)))
        main = np.array(components[0])
        for component in components[1:]:
            comp = np.array(component)
            for side in (comp, main):
                if all(degree[int(n)] >= cap for n in side):
                    inside = set(side.tolist())
                    weakest = min(
                        ((pair, s) for pair, s in chosen.items() if pair[0] in inside),
                        key=lambda item: (item[1], item[0]),
                    )[0]
                    del chosen[weakest]
                    bridges.discard(weakest)
                    degree[weakest[0]] -= 1
                    degree[weakest[1]] -= 1
            free_comp = comp[[degree[int(n)] < cap for n in comp]]
            free_main = main[[degree[int(n)] < cap for n in main]]
            sims = vectors[free_comp] @ vectors[free_main].T
            flat = int(np.argmax(sims))
            a, b = int(free_comp[flat // sims.shape[1]]), int(free_main[flat % sims.shape[1]])
            pair = (a, b) if a < b else (b, a)
            chosen[pair] = float((1 - params.lexical_weight) * sims.flat[flat])
            bridges.add(pair)
            degree[a] += 1
            degree[b] += 1
            main = np.concatenate([main, comp])
    return bridges


def _principal_axes(centred: np.ndarray, count: int, rounds: int = 30) -> list[np.ndarray]:
    """Leading principal axes by deflated power iteration from a fixed start (deterministic)."""
    cov = (centred.T @ centred).astype(np.float64)
    axes: list[np.ndarray] = []
    for index in range(count):
        axis = np.cos(np.arange(cov.shape[0]) * (index + 1.0)) + 1e-3
        for _ in range(rounds):
            for other in axes:
                axis = axis - (axis @ other) * other
            axis = cov @ axis
            norm = np.linalg.norm(axis)
            if norm == 0:
                break
            axis = axis / norm
        axes.append(axis)
    return axes


@dataclass
class LayoutBasis:
    """What the layout was computed on, kept so a note inserted later is placed the same way:
    the centre, the two principal axes (signed), and every node's projection on them."""

    centre: np.ndarray  # (d,)
    axes: np.ndarray  # (2, d)
    projection: np.ndarray  # (n, 2), aligned with the graph's nodes


def _layout(vectors: np.ndarray) -> tuple[np.ndarray, LayoutBasis | None]:
    """Server-side layout: ranks along the first two principal components (deterministic
    sign), so similar notes sit close together and the browser never runs a simulation."""
    n = len(vectors)
    if n == 0:
        return np.zeros((0, 2)), None
    if n < 3:
        return np.column_stack([np.linspace(0.1, 0.9, n) if n > 1 else [0.5], np.full(n, 0.5)]), None
    centre = vectors.mean(axis=0)
    centred = vectors - centre
    axes = _principal_axes(centred, 2)
    out = np.zeros((n, 2))
    signed = []
    for dim in range(2):
        axis = axes[dim]
        axis = axis * (1 if axis[np.argmax(np.abs(axis))] >= 0 else -1)
        signed.append(axis)
        proj = centred @ axis
        ranks = np.empty(n)
        ranks[np.lexsort((np.arange(n), proj))] = np.arange(n)
        out[:, dim] = 0.02 + 0.96 * ranks / (n - 1)
    axes_array = np.array(signed)
    return out, LayoutBasis(centre, axes_array, centred @ axes_array.T)


def build_graph(data: GraphInput, params: GraphParams) -> NavGraph:
    """Build the navigation graph (docs/navigation.md, Build; deterministic: same input, same graph).

    Input order does not matter: notes are sorted by id first."""
    order = sorted(range(len(data.ids)), key=lambda i: data.ids[i])
    ids = [data.ids[i] for i in order]
    vectors = np.ascontiguousarray(data.vectors[order], dtype=np.float32) if order else np.zeros((0, 1), np.float32)
    tokens = [data.tokens[i] for i in order]
    importance = [data.importance[i] for i in order]
    n = len(ids)
    max_level = max_level_for(n, params.m)
    levels = np.array(assign_levels(ids, importance, max_level, params.m), dtype=np.int64)

    per_level: dict[int, dict[tuple[int, int], float]] = {}
    bridges_per_level: dict[int, set[tuple[int, int]]] = {}
    for level in range(max_level, -1, -1):
        members = np.flatnonzero(levels >= level)
        cap = params.m0 if level == 0 else params.m
        chosen = _level_edges(vectors, tokens, members, cap, params)
        bridges_per_level[level] = connect_components(vectors, members, chosen, cap, params)
        per_level[level] = chosen

    layout, basis = _layout(vectors)
    entry = choose_entry(ids, importance, levels, max_level)
    return assemble_graph(params, ids, vectors, tokens, importance, levels, max_level, entry,
                          per_level, bridges_per_level, layout, basis)


def choose_entry(ids: Sequence[str], importance: Sequence[float], levels: np.ndarray, max_level: int) -> int:
    """The entry point: the most important note on the top level (ties by the id's hash)."""
    if not len(ids):
        return -1
    top = np.flatnonzero(levels == max_level).tolist()
    return max(top, key=lambda i: (importance[i], stable_unit(f"{ids[i]}:promote")))


def assemble_graph(params: GraphParams, ids: list[str], vectors: np.ndarray, tokens: list[frozenset[str]],
                   importance: list[float], levels: np.ndarray, max_level: int, entry: int,
                   per_level: dict[int, dict[tuple[int, int], float]],
                   bridges_per_level: dict[int, set[tuple[int, int]]], layout: np.ndarray,
                   basis: LayoutBasis | None, *, changes_since_build: int = 0) -> NavGraph:
    """Per-level pairs (a < b) → one edge per pair with its ``levels`` list (score: the best of
    its levels, ``bridge`` if any level's copy is a bridge), and the adjacency index. Shared by
    the full build and the incremental update, so both produce the same kind of graph."""
    n = len(ids)
    merged: dict[tuple[int, int], Edge] = {}
    for level in sorted(per_level, reverse=True):
        bridges = bridges_per_level.get(level, set())
        for (a, b), score in per_level[level].items():
            edge = merged.get((a, b))
            if edge is None:
                merged[(a, b)] = Edge(a, b, round(score, 6), [level], bridge=(a, b) in bridges)
            else:
                edge.levels.append(level)
                edge.score = max(edge.score, round(score, 6))
                edge.bridge = edge.bridge or (a, b) in bridges

    edges = [merged[pair] for pair in sorted(merged)]
    for edge in edges:
        if len(edge.levels) > 1:
            edge.levels.sort()
    adjacency = index_edges(edges, max_level)

    return NavGraph(
        params=params,
        ids=ids,
        index_of={note_id: i for i, note_id in enumerate(ids)},
        vectors=vectors,
        tokens=tokens,
        levels=levels,
        max_level=max_level,
        entry=entry,
        edges=edges,
        adjacency=adjacency,
        layout=layout,
        order=np.lexsort((np.arange(n), layout[:, 0])) if n else np.zeros(0, dtype=np.int64),
        importance=list(importance),
        basis=basis,
        changes_since_build=changes_since_build,
    )


def index_edges(edges: list[Edge], max_level: int) -> list[dict[int, list[tuple[int, int]]]]:
    """adjacency[level][node] → [(neighbour, edge index)], in edge order."""
    adjacency: list[dict[int, list[tuple[int, int]]]] = [dict() for _ in range(max_level + 1)]
    for index, edge in enumerate(edges):
        for level in edge.levels:
            adjacency[level].setdefault(edge.source, []).append((edge.target, index))
            adjacency[level].setdefault(edge.target, []).append((edge.source, index))
    return adjacency


@dataclass
class Step:
    """One move of the search: from → to on a level (phase: descent or beam)."""

    source: int
    target: int
    level: int
    edge: int
    phase: str


@dataclass
class Trace:
    entry: int
    visited: list[tuple[int, int, float]]  # (node, level, score) in the order scored
    descent: list[Step]
    l0_start: int
    path: list[Step]  # entry → upper levels → L0 hops → goal
    results: list[tuple[int, float]]  # the ef best on L0, best first
    goal: int
    hit: bool  # the target is among the ef results of the standard search
    reached: bool  # the target was reached, within ef or by expanding on past the ef stop
    extra_expansions: int  # nodes expanded after the ef stop to reach the target


def query_scorer(graph: NavGraph, query_vector: np.ndarray, query_tokens: frozenset[str]) -> Callable[[int], float]:
    """score(node) = (1-λ)·cos(query, note) + λ·Jaccard(query words, note words), memoised,
    computed only for the nodes the search actually touches."""
    lam = graph.params.lexical_weight
    q = np.asarray(query_vector, dtype=np.float32)
    cache: dict[int, float] = {}

    def score(node: int) -> float:
        value = cache.get(node)
        if value is None:
            value = (1 - lam) * float(graph.vectors[node] @ q) + lam * jaccard(query_tokens, graph.tokens[node])
            cache[node] = value
        return value

    return score


def trace(graph: NavGraph, score: Callable[[int], float], *, k: int, target: int | None = None) -> Trace:
    """The trace (docs/navigation.md, Trace): greedy descent on the upper levels from the entry point, then a best-first
    beam on L0 with ef = max(k, EF_SEARCH) (HNSW search_layer: stop when the best open candidate
    is worse than the worst of the ef kept). The path is rebuilt from the real parent links.

    With a ``target`` that the ef-bounded beam did not find (``hit`` false), the same best-first
    expansion goes on over every node it has discovered until the target is reached: the page
    then shows the real route the graph offers, and says how many extra expansions it cost."""
    if graph.size == 0:
        return Trace(-1, [], [], -1, [], [], -1, False, False, 0)
    ef = max(k, graph.params.ef_search)
    current = graph.entry
    visited: list[tuple[int, int, float]] = [(current, graph.max_level, score(current))]
    descent: list[Step] = []
    for level in range(graph.max_level, 0, -1):
        improved = True
        while improved:
            improved = False
            best, best_edge, best_score = current, -1, score(current)
            for node, edge in graph.adjacency[level].get(current, ()):
                value = score(node)
                visited.append((node, level, value))
                if value > best_score or (value == best_score and best_edge >= 0 and node < best):
                    best, best_edge, best_score = node, edge, value
            if best_edge >= 0 and best != current:
                descent.append(Step(current, best, level, best_edge, "descent"))
                current = best
                improved = True

    start = current
    seen = {start}
    parent: dict[int, tuple[int, int]] = {}
    candidates = [(-score(start), start)]
    deferred: list[tuple[float, int]] = []  # discovered, not good enough for the ef beam
    kept = [(score(start), start)]  # min-heap of the ef best
    while candidates:
        neg, node = heapq.heappop(candidates)
        if len(kept) >= ef and -neg < kept[0][0]:
            heapq.heappush(deferred, (neg, node))
            break
        for other, edge in graph.adjacency[0].get(node, ()):
            if other in seen:
                continue
            seen.add(other)
            parent[other] = (node, edge)
            value = score(other)
            visited.append((other, 0, value))
            if len(kept) < ef or value > kept[0][0]:
                heapq.heappush(candidates, (-value, other))
                heapq.heappush(kept, (value, other))
                if len(kept) > ef:
                    heapq.heappop(kept)
            else:
                heapq.heappush(deferred, (-value, other))
    results = sorted(((node, value) for value, node in kept), key=lambda item: (-item[1], item[0]))
    hit = target is not None and any(node == target for node, _ in results)

    extra = 0
    if target is not None and not hit:
        frontier = list(candidates) + deferred
        heapq.heapify(frontier)
        expanded = set()
        while target not in seen and frontier:
            _neg, node = heapq.heappop(frontier)
            if node in expanded:
                continue
            expanded.add(node)
            extra += 1
            for other, edge in graph.adjacency[0].get(node, ()):
                if other in seen:
                    continue
                seen.add(other)
                parent[other] = (node, edge)
                value = score(other)
                visited.append((other, 0, value))
                heapq.heappush(frontier, (-value, other))
    reached = target is not None and target in seen
    goal = target if reached else results[0][0]
    hops: list[Step] = []
    node = goal
    while node != start:
        src, edge = parent[node]
        hops.append(Step(src, node, 0, edge, "beam"))
        node = src
    hops.reverse()
    return Trace(graph.entry, visited, descent, start, descent + hops, results, goal, hit, reached, extra)
