"""Incremental maintenance of the navigation graph (pure numpy, no database): after every insert
and removal the build's invariants still hold, and the trace still reaches every note."""
from __future__ import annotations

import copy

import numpy as np
import pytest

from navigation.built import BuiltGraph, NodeInfo
from navigation.graph import (
    GraphInput,
    GraphParams,
    NavGraph,
    build_graph,
    connected_components,
    max_level_for,
    query_scorer,
    trace,
)
from navigation.incremental import IncrementalLimits, apply_delta, incremental_blocker, new_level
from navigation.snapshots import decode, encode
from tests.navigation.test_graph import synthetic_input

PARAMS = GraphParams(m=4, m0=4, ef_search=16)
LIMITS = IncrementalLimits(ef_construction=32, max_fraction=0.2)


def subset(data: GraphInput, indices) -> GraphInput:
    indices = list(indices)
    return GraphInput([data.ids[i] for i in indices], data.vectors[indices],
                      [data.tokens[i] for i in indices], [data.importance[i] for i in indices])


def components(graph: NavGraph, level: int) -> int:
    members = np.flatnonzero(graph.levels >= level).tolist()
    return len(connected_components(members, lambda node: [o for o, _ in graph.adjacency[level].get(node, ())]))


def assert_invariants(graph: NavGraph) -> None:
    n = graph.size
    assert len(set(graph.ids)) == n
    assert graph.index_of == {note_id: i for i, note_id in enumerate(graph.ids)}
    assert len(graph.vectors) == len(graph.tokens) == len(graph.levels) == len(graph.layout) == len(graph.importance) == n
    assert graph.basis is not None
    assert len(graph.basis.projection) == n
    assert sorted(graph.order.tolist()) == list(range(n))
    assert np.all((graph.layout >= 0) & (graph.layout <= 1))
    assert graph.max_level == max_level_for(n, graph.params.m)
    assert graph.levels[graph.entry] == graph.max_level
    pairs = [(e.source, e.target) for e in graph.edges]
    assert len(pairs) == len(set(pairs)), "one merged edge per pair"
    assert all(a < b for a, b in pairs), "one merged edge per pair"
    for edge in graph.edges:
        assert edge.levels
        assert edge.levels == sorted(set(edge.levels))
        assert all(graph.levels[edge.source] >= level and graph.levels[edge.target] >= level for level in edge.levels)
    entries = sum(len(neighbours) for index in graph.adjacency for neighbours in index.values())
    assert entries == 2 * sum(len(e.levels) for e in graph.edges), "the adjacency index lists every edge on each of its levels"
    for level in range(graph.max_level + 1):
        cap = graph.params.m0 if level == 0 else graph.params.m
        assert (graph.levels >= level).sum() >= 1, f"level {level} is empty"
        assert max(graph.degree(level, i) for i in range(n)) <= cap, f"degree bound broken on L{level}"
        assert components(graph, level) == 1, f"L{level} is not connected"
        for node, neighbours in graph.adjacency[level].items():
            for other, index in neighbours:
                edge = graph.edges[index]
                assert {edge.source, edge.target} == {node, other}
                assert level in edge.levels


def assert_reaches_every_note(graph: NavGraph) -> None:
    for target in range(graph.size):
        result = trace(graph, query_scorer(graph, graph.vectors[target], graph.tokens[target]), k=10, target=target)
        assert result.reached, graph.ids[target]
        assert (result.path[-1].target == target) if result.path else graph.entry == target


def test_random_inserts_and_removals_keep_every_invariant():
    """300 notes, then 40 random steps of 0–3 removals and 0–3 inserts each (sometimes the entry
    point, sometimes a changed note: same id, new content): invariants after every step, and at
    the end the trace reaches every note queried with its own content."""
    pool = synthetic_input(500, seed=11)
    rng = np.random.default_rng(4)
    graph = build_graph(subset(pool, range(300)), PARAMS)
    assert_invariants(graph)
    next_new = 300
    for step in range(40):
        removed = [graph.ids[i] for i in rng.choice(graph.size, size=int(rng.integers(0, 4)), replace=False)]
        if step % 9 == 0:
            removed.append(graph.ids[graph.entry])
        fresh = list(range(next_new, next_new + int(rng.integers(0, 4))))
        next_new += len(fresh)
        added = subset(pool, fresh)
        if step % 7 == 3:  # a changed note: the same id comes back with another note's content
            changed = graph.ids[int(rng.integers(0, graph.size))]
            donor = int(rng.integers(300, 500))
            added = GraphInput(added.ids + [changed], np.vstack([added.vectors, pool.vectors[donor:donor + 1]]),
                               added.tokens + [pool.tokens[donor]], added.importance + [0.9])
        assert incremental_blocker(graph, len(set(removed)), len(added.ids), LIMITS) is None
        before = {note_id: graph.layout[i].tolist() for i, note_id in enumerate(graph.ids)}
        updated = apply_delta(graph, removed, added, LIMITS)
        assert_invariants(updated)
        expected = (set(graph.ids) - set(removed)) | set(added.ids)
        assert set(updated.ids) == expected
        for note_id in set(graph.ids) & set(updated.ids) - set(added.ids):
            assert updated.layout[updated.index_of[note_id]].tolist() == before[note_id], "kept notes keep their place"
        for note_id in added.ids:
            assert updated.levels[updated.index_of[note_id]] >= new_level(note_id, graph.max_level, PARAMS.m)
        assert updated.changes_since_build == graph.changes_since_build + len(set(removed) | (set(added.ids) & set(graph.ids))) + len(added.ids)
        graph = updated
    assert graph.changes_since_build > 0
    assert_reaches_every_note(graph)


def test_many_removals_then_many_inserts_in_one_step():
    """Slots of removed notes are reused by new ones and the last notes and edges move into the
    rest; both directions at once, near the 20 % limit."""
    pool = synthetic_input(500, seed=12)
    graph = build_graph(subset(pool, range(400)), PARAMS)
    for removed, added in ((graph.ids[10:60], subset(pool, range(400, 405))), (None, subset(pool, range(405, 450)))):
        removed = graph.ids[:5] if removed is None else removed
        assert incremental_blocker(graph, len(removed), len(added.ids), LIMITS) is None
        graph = apply_delta(graph, removed, added, LIMITS)
        assert_invariants(graph)
    assert set(pool.ids[400:450]) <= set(graph.ids)
    assert graph.size == 395
    assert_reaches_every_note(graph)


def test_an_inserted_note_is_linked_to_its_nearest_notes_on_l0():
    pool = synthetic_input(801, seed=5)
    graph = build_graph(subset(pool, range(800)), PARAMS)
    updated = apply_delta(graph, [], subset(pool, [800]), LIMITS)
    node = updated.index_of[pool.ids[800]]
    neighbours = {other for other, _ in updated.adjacency[0][node]}
    assert 1 <= len(neighbours) <= PARAMS.m0
    similarity = updated.vectors @ updated.vectors[node]
    similarity[node] = -np.inf
    nearest = set(np.argsort(-similarity)[:20].tolist())
    assert neighbours & nearest, "the ef_construction search found none of the 20 nearest notes"


def test_the_old_graph_is_left_untouched_for_requests_still_reading_it():
    pool = synthetic_input(260, seed=2)
    graph = build_graph(subset(pool, range(250)), PARAMS)
    snapshot = copy.deepcopy((graph.ids, graph.levels, [(e.source, e.target, list(e.levels), e.score) for e in graph.edges],
                              graph.adjacency, graph.layout, graph.entry))
    apply_delta(graph, [graph.ids[graph.entry], graph.ids[3]], subset(pool, range(250, 260)), LIMITS)
    after = (graph.ids, graph.levels, [(e.source, e.target, list(e.levels), e.score) for e in graph.edges],
             graph.adjacency, graph.layout, graph.entry)
    assert after[0] == snapshot[0]
    assert np.array_equal(after[1], snapshot[1])
    assert after[2] == snapshot[2]
    assert after[3] == snapshot[3]
    assert np.array_equal(after[4], snapshot[4])
    assert after[5] == snapshot[5]


def test_removing_every_top_level_note_promotes_a_new_entry_point():
    pool = synthetic_input(300, seed=8)
    graph = build_graph(subset(pool, range(300)), PARAMS)
    for level in range(graph.max_level, 0, -1):
        top = [graph.ids[i] for i in np.flatnonzero(graph.levels == level)]
        if len(top) <= 0.2 * graph.size:
            graph = apply_delta(graph, top, subset(pool, []), LIMITS)
            assert_invariants(graph)
            assert all(note_id not in graph.index_of for note_id in top)
            # The build's rule again: a note whose top level this is, the most important one promoted.
            assert np.any(graph.levels == level)
    assert_reaches_every_note(graph)


def test_large_changes_and_a_new_level_count_need_a_full_build():
    pool = synthetic_input(100, seed=3)
    graph = build_graph(subset(pool, range(60)), PARAMS)  # 60 notes: max level 2 (16 ≤ n < 64)
    assert incremental_blocker(graph, 2, 3, LIMITS) is None
    assert "more than 20%" in incremental_blocker(graph, 6, 7, LIMITS)
    assert "levels" in incremental_blocker(graph, 0, 4, LIMITS)  # 64 notes: max level 3
    assert incremental_blocker(build_graph(subset(pool, range(2)), PARAMS), 0, 1, LIMITS) is not None
    drifted = apply_delta(graph, [graph.ids[0]], subset(pool, [60, 61]), LIMITS)
    assert drifted.changes_since_build == 3
    background = IncrementalLimits(max_fraction=0.2, count_drift=True)
    assert incremental_blocker(drifted, 5, 5, LIMITS) is None
    assert "drifted" in incremental_blocker(drifted, 5, 5, background)


def test_a_stored_graph_reads_back_as_the_same_graph():
    pool = synthetic_input(400, seed=6)
    graph = apply_delta(build_graph(subset(pool, range(390)), PARAMS), [pool.ids[0]], subset(pool, range(390, 400)), LIMITS)
    info = [NodeInfo("case", "fact", i % 3 or None, f"tag:e{i % 5}", f"标签 {i}", graph.importance[i]) for i in range(graph.size)]
    stamps = {note_id: f"2026-11-30T10:00:{i % 60:02d}+00:00" for i, note_id in enumerate(graph.ids)}
    built = BuiltGraph(graph, info, "399:a:b", False, {1: "电脑花屏"}, stamps)
    back = decode(encode(built), matter_titles={1: "电脑花屏"})
    g = back.graph
    assert back.stored
    assert back.version == "399:a:b"
    assert back.stamps == stamps
    assert back.info == info
    assert g.ids == graph.ids
    assert g.tokens == graph.tokens
    assert g.importance == graph.importance
    assert np.array_equal(g.vectors, graph.vectors)
    assert np.array_equal(g.levels, graph.levels)
    assert np.array_equal(g.layout, graph.layout)
    assert np.array_equal(g.order, graph.order)
    assert [(e.source, e.target, e.levels, e.score, e.bridge) for e in g.edges] == [
        (e.source, e.target, e.levels, e.score, e.bridge) for e in graph.edges
    ]
    assert g.adjacency == graph.adjacency
    assert g.entry == graph.entry
    assert g.params == graph.params
    assert g.changes_since_build == graph.changes_since_build == 11
    assert np.array_equal(g.basis.projection, graph.basis.projection)
    # A stored graph can be updated further, like the one it was made from.
    assert_invariants(apply_delta(g, [g.ids[5]], subset(pool, []), LIMITS))


@pytest.mark.parametrize("seed", [1, 2])
def test_an_incremental_graph_is_deterministic_for_the_same_history(seed):
    pool = synthetic_input(220, seed=seed)
    base = build_graph(subset(pool, range(200)), PARAMS)
    one = apply_delta(base, [base.ids[1]], subset(pool, range(200, 210)), LIMITS)
    two = apply_delta(base, [base.ids[1]], subset(pool, reversed(range(200, 210))), LIMITS)
    assert [(e.source, e.target, e.levels) for e in one.edges] == [(e.source, e.target, e.levels) for e in two.edges]
    assert one.entry == two.entry
    assert np.array_equal(one.layout, two.layout)
