"""The navigation graph itself (docs/navigation.md): levels, edges, connectivity, determinism, trace."""
from __future__ import annotations

import math
import uuid

import numpy as np
import pytest

from infra.embeddings import get_embedder
from memory.segmentation import segment
from navigation.graph import (
    GraphInput,
    GraphParams,
    assign_levels,
    build_graph,
    connected_components,
    max_level_for,
    query_scorer,
    stable_unit,
    trace,
)
from tests.navigation.corpus import sentences

PARAMS = GraphParams(m=4, m0=4, ef_search=16)


def synthetic_input(n: int, seed: int = 1, d: int = 64) -> GraphInput:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(12, d))
    labels = rng.integers(0, 12, n)
    vectors = centres[labels] + rng.normal(size=(n, d)) * 0.8
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [str(uuid.UUID(int=int(rng.integers(0, 2**63)) << 64 | i)) for i in range(n)]
    tokens = [frozenset({f"topic{labels[i]}", f"w{rng.integers(0, 200)}", f"w{rng.integers(0, 200)}"}) for i in range(n)]
    return GraphInput(ids, vectors.astype(np.float32), tokens, rng.random(n).round(2).tolist())


def l0_components(graph) -> int:
    return len(connected_components(range(graph.size), lambda node: [o for o, _ in graph.adjacency[0].get(node, ())]))


def test_stable_unit_is_a_deterministic_hash_in_unit_interval():
    values = [stable_unit(f"note-{i}:0") for i in range(1000)]
    assert all(0 <= v < 1 for v in values)
    assert stable_unit("x:0") == stable_unit("x:0") != stable_unit("x:1")
    assert 0.45 < float(np.mean(values)) < 0.55


def test_max_level_follows_the_level_multiplier():
    assert max_level_for(1, 4) == 0
    assert max_level_for(3, 4) == 0
    assert max_level_for(4, 4) == 1
    assert max_level_for(10_000, 4) == math.floor(math.log(10_000) * (1 / math.log(4)))  # 6


def test_level_distribution_is_geometric_with_p_one_over_m_on_10k_ids():
    ids = [str(uuid.UUID(int=i * 2_654_435_761 + 17)) for i in range(10_000)]
    max_level = max_level_for(len(ids), 4)
    levels = np.array(assign_levels(ids, [0.5] * len(ids), max_level, 4))
    counts = np.bincount(levels, minlength=max_level + 1)
    p = 0.25
    expected = np.array([(1 - p) * p**level for level in range(max_level)] + [p**max_level]) * len(ids)
    # Chi-square on the levels with enough expected mass (≥ 5), the tail pooled.
    keep = expected >= 5
    observed = np.append(counts[keep], counts[~keep].sum())
    wanted = np.append(expected[keep], expected[~keep].sum())
    chi2 = float(((observed - wanted) ** 2 / wanted).sum())
    dof = len(observed) - 1
    assert chi2 < 20.5, (counts.tolist(), expected.round(1).tolist(), chi2)  # p ≈ 0.001 for dof ≤ 6
    assert dof >= 4
    # About a quarter reach L1, a sixteenth L2.
    assert abs((levels >= 1).mean() - 0.25) < 0.02
    assert abs((levels >= 2).mean() - 0.0625) < 0.01


def test_every_level_is_non_empty_promoting_the_most_important():
    ids = [f"n{i}" for i in range(40)]
    importance = [0.1] * 40
    importance[7] = 0.99
    levels = assign_levels(ids, importance, 5, 4)  # 40 notes cannot fill 5 levels by hashing alone
    assert set(range(6)) <= set(levels)
    assert levels[7] == 5


@pytest.fixture(scope="module")
def graph_1200():
    return build_graph(synthetic_input(1200), PARAMS)


def test_degree_bound_on_every_level(graph_1200):
    graph = graph_1200
    for level in range(graph.max_level + 1):
        cap = PARAMS.m0 if level == 0 else PARAMS.m
        assert max(graph.degree(level, i) for i in range(graph.size)) <= cap


def test_every_level_non_empty_and_edges_stay_within_their_level(graph_1200):
    graph = graph_1200
    for level in range(graph.max_level + 1):
        assert (graph.levels >= level).sum() >= 1
    for edge in graph.edges:
        for level in edge.levels:
            assert graph.levels[edge.source] >= level
            assert graph.levels[edge.target] >= level


def test_l0_is_connected(graph_1200):
    assert l0_components(graph_1200) == 1


def test_edges_on_several_levels_are_merged_with_a_levels_list(graph_1200):
    pairs = [(e.source, e.target) for e in graph_1200.edges]
    assert len(pairs) == len(set(pairs))
    assert all(e.source < e.target for e in graph_1200.edges)
    multi = [e for e in graph_1200.edges if len(e.levels) > 1]
    assert multi, "upper-level neighbours are usually neighbours on L0 too"
    assert all(e.levels == sorted(set(e.levels)) for e in graph_1200.edges)


def test_l0_connectivity_repair_adds_bridges_between_separate_clusters():
    rng = np.random.default_rng(3)
    d = 32
    a, b = rng.normal(size=d), rng.normal(size=d)
    vectors = np.array([a + rng.normal(size=d) * 0.01 for _ in range(30)] + [b + rng.normal(size=d) * 0.01 for _ in range(30)])
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"id-{i:03d}" for i in range(60)]
    tokens = [frozenset({"a" if i < 30 else "b"}) for i in range(60)]
    graph = build_graph(GraphInput(ids, vectors.astype(np.float32), tokens, [0.5] * 60), PARAMS)
    assert l0_components(graph) == 1
    assert max(graph.degree(0, i) for i in range(60)) <= PARAMS.m0


def test_same_notes_give_the_same_graph_in_any_order():
    data = synthetic_input(500, seed=9)
    one = build_graph(data, PARAMS)
    permutation = np.random.default_rng(5).permutation(500)
    shuffled = GraphInput(
        [data.ids[i] for i in permutation], data.vectors[permutation],
        [data.tokens[i] for i in permutation], [data.importance[i] for i in permutation],
    )
    two = build_graph(shuffled, PARAMS)
    assert one.ids == two.ids
    assert one.levels.tolist() == two.levels.tolist()
    assert [(e.source, e.target, e.levels, e.score, e.bridge) for e in one.edges] == [
        (e.source, e.target, e.levels, e.score, e.bridge) for e in two.edges
    ]
    assert one.entry == two.entry
    assert np.allclose(one.layout, two.layout)


def test_trace_descends_from_the_entry_point_then_walks_l0(graph_1200):
    graph = graph_1200
    target = int(np.flatnonzero(graph.levels == 0)[3])
    result = trace(graph, query_scorer(graph, graph.vectors[target], graph.tokens[target]), k=10, target=target)
    assert result.entry == graph.entry
    assert graph.levels[graph.entry] == graph.max_level
    levels_seen = [step.level for step in result.path]
    assert levels_seen == sorted(levels_seen, reverse=True)
    assert all(step.phase == "descent" for step in result.path if step.level > 0)
    # Consecutive steps chain: each starts where the previous ended, over a real edge of its level.
    position = graph.entry
    for step in result.path:
        assert step.source == position
        edge = graph.edges[step.edge]
        assert {edge.source, edge.target} == {step.source, step.target}
        assert step.level in edge.levels
        position = step.target
    assert position == result.goal == target
    assert len(result.results) == PARAMS.ef_search


@pytest.fixture(scope="module")
def real_corpus():
    texts = [text for text, _event, _kw in sentences(300)]
    embedder = get_embedder()
    passages = embedder.embed_passages(texts)
    queries = embedder.embed_queries(texts)  # one batched encode (32 at a time), not 300
    ids = [str(uuid.UUID(int=i * 7919 + 13)) for i in range(len(texts))]
    tokens = [frozenset(segment(text)) for text in texts]
    return texts, ids, passages, queries, tokens


def test_trace_reaches_every_note_queried_with_its_own_content(real_corpus):
    """300 notes embedded with the real model; each note's content, through the query encoder,
    is the query. Every note is reached from the entry point; how many fall within the plain
    ef = 16 beam (``hit``) is measured, not assumed (degree ≤ 4 is a narrow graph)."""
    texts, ids, passages, queries, tokens = real_corpus
    graph = build_graph(GraphInput(ids, passages, tokens, [0.5] * len(ids)), PARAMS)
    reached = hits = 0
    for i, note_id in enumerate(ids):
        target = graph.index_of[note_id]
        result = trace(graph, query_scorer(graph, queries[i], frozenset(segment(texts[i]))), k=10, target=target)
        reached += result.reached
        hits += result.hit
        assert result.path[-1].target == target if result.path else graph.entry == target
    assert reached == len(ids)
    assert hits / len(ids) >= 0.6, hits
