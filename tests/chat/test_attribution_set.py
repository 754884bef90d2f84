"""The attribution set's dev split through the product's own answer check and chat turn
(showcase/evaluation/attribution): the scorer counts what it claims to, the check keeps most
supporting markers and drops most wrong ones, and bob — same firm, not assigned — is answered
"memory holds nothing" on every one of alice's questions."""
from __future__ import annotations

import pytest

from showcase.evaluation import attribution_scoring


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
