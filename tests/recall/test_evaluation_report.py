"""The evaluation report's verdict lines on hand-made outcomes (no database): which rows are
below a baseline, by how much, and whether the difference is more than noise."""
from __future__ import annotations

from evaluation.multisession.runner import MemoryReport, Outcome


def outcome(category: str, language: str, product_mrr: float, baseline_mrr: float) -> Outcome:
    """A recall question whose product and raw baselines found the gold within 10, at these MRRs."""
    scores = {"product": {"r@5": 1.0, "r@10": 1.0, "mrr": product_mrr}}
    for baseline in ("rrf", "dense", "bm25"):
        scores[baseline] = {"r@5": 1.0, "r@10": 1.0, "mrr": baseline_mrr}
    return Outcome(question={"id": category, "category": category, "language": language},
                   scores=scores, noted=True)


def report(outcomes: list[Outcome]) -> MemoryReport:
    return MemoryReport(outcomes=outcomes, notes_stored=0, messages=0, import_summary="", strategy="layered",
                        seconds={})


def test_a_row_one_question_below_is_named_with_an_interval_holding_zero():
    outcomes = [outcome("history", "zh", 0.5, 1.0), *(outcome("history", "zh", 1.0, 1.0) for _ in range(6)),
                *(outcome("advice", "zh", 1.0, 0.5) for _ in range(20))]
    below = report(outcomes).below_baselines()
    assert [line.split(" (")[0] for line in below] == [
        "history/zh mrr < rrf", "history/zh mrr < dense", "history/all mrr < rrf", "history/all mrr < dense"]
    difference, interval, count = below[0].split(" (")[1].rstrip(")").split(", ")
    low, high = (float(bound) for bound in interval.removeprefix("95% ").split(".."))
    assert (difference, count) == ("-0.071", "n=7")
    assert low < float(difference) < high == 0.0  # one question of seven decides it: within noise
    overall = {(d["baseline"], d["metric"]): d for d in report(outcomes).overall_differences()}
    assert overall[("rrf", "mrr")]["low"] > 0  # the product's lead over all 27 questions is more than noise
    assert overall[("rrf", "r@10")] == {"baseline": "rrf", "metric": "r@10", "difference": 0.0, "low": 0.0, "high": 0.0}


def test_the_report_says_none_when_nothing_is_below():
    lines = report([outcome("advice", "zh", 1.0, 0.5) for _ in range(4)]).lines()
    assert "product below raw RRF or raw dense (R@10, MRR) in: none" in lines
    assert any(line.startswith("product minus baseline on every recall question") and "mrr vs rrf +0.500" in line
               for line in lines)
