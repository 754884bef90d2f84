"""The evaluation's ranking metrics and BM25 on small hand-made inputs (figures worked out by hand)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.baselines import BM25, RawMessageIndex
from evaluation.metrics import paired_bootstrap, recall_all_at_k, recall_at_k, reciprocal_rank, rrf_fuse


def test_recall_all_needs_every_gold_message_within_k():
    ranking = [{1}, {2}, {3, 4}, {5}]
    assert recall_all_at_k(ranking, {2, 4}, 3) == 1.0
    assert recall_all_at_k(ranking, {2, 4}, 2) == 0.0  # 4 only arrives at rank 3
    assert recall_all_at_k(ranking, {2, 9}, 4) == 0.0  # 9 never arrives
    assert recall_all_at_k([], {1}, 10) == 0.0


def test_recall_at_k_is_the_covered_share():
    assert recall_at_k([{1}, {2}], {1, 2, 3, 4}, 2) == 0.5
    assert recall_at_k([{1}, {2}], {1, 2, 3, 4}, 1) == 0.25


def test_metrics_refuse_an_empty_gold_set():
    with pytest.raises(ValueError):
        recall_all_at_k([{1}], set(), 5)
    with pytest.raises(ValueError):
        recall_at_k([{1}], set(), 5)


def test_reciprocal_rank_of_the_first_position_with_any_gold():
    ranking = [{7}, {8}, {2, 9}, {1}]
    assert reciprocal_rank(ranking, {1, 2}) == pytest.approx(1 / 3)
    assert reciprocal_rank(ranking, {1}) == pytest.approx(1 / 4)
    assert reciprocal_rank(ranking, {1}, depth=3) == 0.0
    assert reciprocal_rank(ranking, {42}) == 0.0


def test_rrf_sums_reciprocal_ranks_with_k_60():
    fused = rrf_fuse([["a", "b", "c"], ["c", "a"]])
    # a: 1/61 + 1/62, c: 1/63 + 1/61, b: 1/62
    assert fused == ["a", "c", "b"]
    assert rrf_fuse([["x"], ["y"]]) == ["x", "y"]  # a tie keeps the first-seen order
    assert rrf_fuse([["b", "a"]], k=1) == ["b", "a"]


def test_bm25_scores_match_the_formula():
    bm25 = BM25({1: ["deposit", "refund", "deposit"], 2: ["refund"], 3: ["oven", "door", "hinge", "loose"]})
    average = (3 + 1 + 4) / 3
    idf_deposit = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    expected = idf_deposit * 2 * 2.2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / average))
    assert bm25.scores(["deposit"])[1] == pytest.approx(expected)
    assert bm25.rank(["refund"]) == [2, 1]  # the shorter document first
    assert bm25.rank(["deposit", "refund"])[0] == 1
    assert bm25.rank(["nothing"]) == []


def test_raw_index_ranks_dense_keyword_and_fused():
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.7071, 0.7071]], dtype=np.float32)
    index = RawMessageIndex([10, 20, 30], ["押金 退还 三千元", "the oven door hinge", "押金 oven"], vectors)
    ranked = index.rank("oven", np.array([0.0, 1.0], dtype=np.float32))
    assert ranked["dense"] == [20, 30, 10]
    assert set(ranked["bm25"]) == {20, 30}
    assert ranked["rrf"][:2] == [20, 30]
    chinese = index.rank("押金退还", np.array([1.0, 0.0], dtype=np.float32))
    assert chinese["bm25"][0] == 10  # jieba splits the query; both of its words are in message 10
    assert set(chinese["bm25"]) == {10, 30}


def test_leak_rules_name_every_way_a_hit_can_cross_a_wall():
    from types import SimpleNamespace

    from evaluation.multisession.runner import _leaks, _MessageInfo

    firm, other_firm, me, colleague, my_matter, walled = 1, 2, 10, 11, 100, 101
    info = {
        1: _MessageInfo("mine", firm, my_matter, me),
        2: _MessageInfo("walled", firm, walled, colleague),
        3: _MessageInfo("theirs", other_firm, None, 99),
        4: _MessageInfo("colleague-personal", firm, None, colleague),
    }

    def note(firm_id=firm, scope="case", owner_id=None):
        return SimpleNamespace(note=SimpleNamespace(pk=7, firm_id=firm_id, memory_scope=scope, owner_id=owner_id))

    def check(hit, sources, forbidden=frozenset()):
        return _leaks(hit, set(sources), me, firm, {my_matter}, info, set(forbidden))

    assert check(note(), [1]) == []
    assert check(note(), [4]) == []  # a firm-wide note drawn from a colleague's chat is by design
    assert check(note(), [2])
    assert "not assigned" in check(note(), [2])[0]
    assert check(note(), [3])
    assert "another firm" in check(note(), [3])[0]
    assert check(note(), [999])
    assert "another firm" in check(note(), [999])[0]  # outside the evaluation
    assert check(note(firm_id=other_firm), [1]) == ["another firm's note 7"]
    assert check(note(scope="user_profile", owner_id=colleague), [4])
    assert check(note(scope="user_profile", owner_id=me), [1]) == []
    assert check(note(), [4], forbidden=[4])
    assert "must-not" in check(note(), [4], forbidden=[4])[0]
    message_hit = SimpleNamespace(note=None)
    assert check(message_hit, [1]) == []
    assert check(message_hit, [4])
    assert "raw message" in check(message_hit, [4])[0]


def test_paired_bootstrap_of_a_constant_difference_is_that_difference():
    assert paired_bootstrap([0.5] * 7) == (0.5, 0.5, 0.5)


def test_paired_bootstrap_interval_holds_zero_when_one_question_decides():
    # ten questions, the product one place lower on one of them (MRR 1 → 0.5): below, by noise
    difference, low, high = paired_bootstrap([0.0] * 9 + [-0.5])
    assert difference == -0.05
    assert low < 0 <= high == 0.0
    # the same figures every run (a seeded resample), another seed other draws
    assert paired_bootstrap([0.0] * 9 + [-0.5]) == (difference, low, high)


def test_paired_bootstrap_interval_excludes_zero_for_a_consistent_lead():
    difference, low, high = paired_bootstrap([0.5, 0.25, 0.5, 0.0, 0.5, 0.75, 0.5, 0.25, 0.5, 0.5] * 5)
    assert 0 < low < difference < high
    wide = paired_bootstrap([1.0, -1.0, 1.0, -1.0])
    assert wide[0] == 0.0 and wide[1] <= -0.5 and wide[2] >= 0.5


def test_paired_bootstrap_needs_a_question():
    with pytest.raises(ValueError):
        paired_bootstrap([])
