"""The attribution set's dev split through the product's own answer check and chat turn
(evaluation/attribution): the scorer counts what it claims to, the check keeps most
supporting markers and drops most wrong ones, and bob — same firm, not assigned — is answered
"memory holds nothing" on every one of alice's questions."""
from __future__ import annotations

import pytest

from evaluation import attribution_scoring


def test_the_check_is_scored_sentence_by_sentence():
    report = attribution_scoring.score("dev")

    assert report.answers >= 40 and report.sentences >= 200
    for _label, name in report.FIGURES:
        share = getattr(report, name)
        assert share.whole > 0 and share.hit + len(share.missed) == share.whole
    assert report.marker_precision.value >= 0.85 and report.marker_recall.value >= 0.85
    assert report.wrong_markers_removed.value >= 0.6
    assert report.invented_statutes_marked.value == 1.0
    assert set(report.rules) <= {"conflicting_value", "missing_identifier", "shared_key_value", "shared_words", "none"}


def test_a_split_that_does_not_exist_is_refused():
    with pytest.raises(ValueError):
        attribution_scoring.load("train")


@pytest.mark.django_db(transaction=False)
def test_bob_is_told_memory_holds_nothing_on_alices_matters():
    report = attribution_scoring.score_nothing("dev")

    assert report.walled.whole == report.answerable.whole >= 40
    assert report.walled.value == 1.0, report.walled.missed
    assert report.never_said.whole >= 10
    assert report.answerable.value >= 0.7  # most of what alice asks is answered from memory
    relevant = [bearing for bearing, holds in report.items if holds]
    assert relevant and len(relevant) < len(report.items)  # the weak floor is scored on both kinds


@pytest.mark.django_db(transaction=False)
def test_the_live_run_asks_the_configured_model_and_checks_its_answers(llm_online):
    """``evaluate_citations --live`` against the fake OpenAI-compatible server (real HTTP, SSE):
    alice's first questions and bob's walled one, each answer checked as the chat checks it."""
    from evaluation.attribution_live import score_live

    llm_online.script(
        "您的押金是6000元，2025年3月15日交的[1]。",  # alice, d01-a1
        "押金是6000元[1]。",  # bob, walled: his [1] is nothing of alice's matter
        "根据《民法典》第九百九十九条，房东应当退还[42]。",  # alice, d01-a2: an invented statute, a number not listed
    )
    report = score_live("dev", limit=2, walled=1)

    assert (report.answers, report.failed, len(report.seconds)) == (2, [], 2)
    assert report.markers_written == 2 and report.markers_kept == 1  # [42] is in no list
    assert report.kept_to_support.value == 1.0  # [1] is the note of d01-m1, the message the set names
    assert report.walled.value == 1.0 and report.answerable.whole == 2
    assert report.unverified == 1 and report.marker_removed >= 1
    assert len(llm_online.chat_requests()) == 3


@pytest.mark.django_db(transaction=False)
def test_a_failing_model_is_counted_not_fatal(llm_online):
    from evaluation.attribution_live import score_live

    llm_online.script_error(500, "model crashed")
    llm_online.script("您的押金是6000元[1]。")
    report = score_live("dev", limit=2, walled=0)
    assert report.answers == 1 and len(report.failed) == 1 and "model crashed" in report.failed[0]
