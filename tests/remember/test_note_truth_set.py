"""The note-truth set's dev split through the real write path (showcase/evaluation/note_truth):
no note calls anyone "用户" or "<login>说", the typed correction of the deposit supersedes it,
and the scorer counts what it claims to (a missed fact is listed)."""
from __future__ import annotations

import pytest

from showcase.evaluation import note_truth_scoring


@pytest.mark.django_db(transaction=False)
def test_the_dev_split_notes_name_their_subject_and_the_deposit_correction_replaces():
    report = note_truth_scoring.score("dev")

    assert report.notes > 40
    assert report.user_word_notes == 0 and report.login_said_notes == 0
    assert not any(miss.startswith("correction c01 ") for miss in report.misses), report.misses
    assert report.corrections >= 8 and report.facts >= 60
    said = [miss for miss in report.misses if miss.startswith(("fact ", "correction "))]
    assert len(said) == (report.facts - report.facts_noted) + (report.corrections - report.corrections_done)
    assert report.documents.documents == 3 and report.documents.contract_notes_as_law == 0
