"""The shipped evaluation runs end to end on a slice of the month story: real import through the
write path, real search; no leaks across matters or firms, and recall above the measured floor."""
from __future__ import annotations

import pytest
from django.core.management import call_command

from evaluation.runner import evaluate, load_dataset, select
from memory.models import Firm

pytestmark = pytest.mark.django_db

SLICE = ["conv-pc", "conv-dp", "conv-bt1"]
# Measured on this slice with the offline engine: recall@5 0.72, recall@10 0.90, MRR 0.75 (the
# write path's ceiling 0.95); the floors leave room for extraction changes without hiding a
# retrieval regression.
RECALL_AT_10_FLOOR = 0.6
RECALL_AT_5_FLOOR = 0.55
MRR_FLOOR = 0.55


def test_dataset_has_sixty_labelled_questions_and_negative_ones():
    data = load_dataset()
    questions = data["questions"]
    assert len(questions) >= 60
    assert sum(1 for q in questions if q["answers"]) >= 60
    assert any(q["layer"] == "negative" for q in questions)
    assert {t["firm"] for t in data["transcripts"]} == {"alpha", "beta"}
    titles = {c["title"] for t in data["transcripts"] for c in t["conversations"]}
    assert {"电脑花屏", "租房押金", "课程退款", "加班费", "维修费"} <= titles


@pytest.mark.end_to_end
def test_evaluation_slice_has_no_leaks_and_recall_above_floor():
    firms_before = Firm.objects.count()
    report = evaluate(select(load_dataset(), conversations=SLICE))
    metrics = report.metrics()
    assert report.leaks == 0, report.lines()
    assert report.notes_stored > 0
    assert metrics["overall"]["labelled"] >= 20
    assert metrics["overall"]["recall@10"] >= RECALL_AT_10_FLOOR, report.lines()
    # The right note near the top, not only somewhere in ten: recall@5 and MRR have floors too.
    assert metrics["overall"]["recall@5"] >= RECALL_AT_5_FLOOR, report.lines()
    assert metrics["overall"]["mrr"] >= MRR_FLOOR, report.lines()
    assert Firm.objects.count() == firms_before  # rolled back: the throw-away firms are gone


def test_command_prints_metrics_per_layer(capsys):
    call_command("evaluate_retrieval", "--conversations", "conv-bt1")
    out = capsys.readouterr().out
    assert "recall@5" in out
    assert "recall@10" in out
    assert "MRR" in out
    assert "overall" in out
    assert "leaks: 0" in out
    assert "raw-message baselines" in out  # every evaluation prints the raw baseline beside the product
    assert "rrf R@10" in out
    assert "dense MRR" in out
    assert "bm25 R@5" in out
