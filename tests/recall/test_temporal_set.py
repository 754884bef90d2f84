"""The temporal set (evaluation/temporal/) and its scorer: the data is whole and valid (its own
check), a missing split fails loudly, values are judged as whole numbers, and on dev the product
— reading the day a question names — finds the value that held then more often than today's
search of the question as it is, and puts the replaced value first less often — also for a moment
named by the firm's own advice."""
from __future__ import annotations

import runpy

import pytest

from evaluation import temporal_scoring
from evaluation.temporal_scoring import FOLDER, judge, says


def test_the_set_passes_its_own_check(capsys):
    check = runpy.run_path(str(FOLDER / "check.py"), run_name="temporal_check")
    assert check["main"](["check.py"]) == 0, capsys.readouterr().out


def test_a_missing_split_fails_loudly(tmp_path):
    with pytest.raises(ValueError):
        temporal_scoring.load("dev3")
    with pytest.raises(FileNotFoundError):
        temporal_scoring.load("dev", folder=tmp_path)


@pytest.mark.parametrize("text, value, stated", [
    ("月租4500元", "4500元", True), ("月租4500", "4500元", True), ("月租14500元", "4500元", False),
    ("押金2000.5元", "2000元", False), ("开庭改到3月12日", "3月12日", True), ("RMB 45,000", "45,000", True),
])
def test_a_value_is_stated_only_as_a_whole_number(text, value, stated):
    assert says(text, value) is stated


def test_the_replaced_value_first_is_counted():
    question = {"expected_value": "4500元", "wrong_value": "4800元"}
    assert judge(["月租4800元", "月租4500元"], question) == (2, True)
    assert judge(["月租4500元", "月租4800元"], question) == (1, False)
    assert judge(["无关"], question) == (None, False)


@pytest.mark.django_db
def test_on_dev_reading_the_named_day_finds_what_held_then():
    report = temporal_scoring.score("dev")
    first = {system: sum(rank == 1 for rank, _ in report.outcomes[system]["as_of"]) for system in ("layered", "product")}
    wrong = {system: sum(w for _, w in report.outcomes[system]["as_of"]) for system in ("layered", "product")}
    assert report.dated >= 8
    assert first["product"] > first["layered"] and wrong["product"] < wrong["layered"], (first, wrong)
    # a moment named by the firm's own advice ("我们第一次建议…的时候"): read then, the advice first
    advised = {system: sum(rank == 1 for rank, _ in report.outcomes[system]["when_advised"])
               for system in ("layered", "product")}
    assert advised["product"] > advised["layered"], advised


def test_a_split_of_questions_only_is_asked_over_dev_conversations():
    data = temporal_scoring.load("dev_advised")
    assert data["conversations"] == temporal_scoring.load("dev")["conversations"]
    assert {q["category"] for q in data["questions"]["questions"]} == {"when_advised"}


@pytest.mark.parametrize("split", ["dev", "test"])
def test_the_dated_facts_are_whole(split):
    """Every gold date is the words of its message, and a real day, month or year."""
    from datetime import date

    from evaluation.temporal_dates import load_gold

    messages = {m["id"]: m["content"] for c in temporal_scoring.load(split)["conversations"]["conversations"]
                for m in c["messages"]}
    gold = load_gold(split)
    assert len(gold) > 40
    for item in gold:
        assert item["text"] in messages[item["message"]], item
        parts = [int(p) for p in item["iso"].split("-")]
        assert len(parts) == {"year": 1, "month": 2, "day": 3}[item["precision"]], item
        date(*parts, *[1] * (3 - len(parts)))


def test_reading_dates_is_scored_by_iso_precision_and_words():
    """A date read at the gold's ISO and precision over its words counts; one read otherwise is
    a false reading and the gold a miss."""
    from evaluation.temporal_dates import DatesReport, _score_reading

    data = {"conversations": {"conversations": [{"id": "c", "messages": [
        {"id": "m1", "timestamp": "2026-04-08T10:00:00+08:00", "content": "3月下旬签了协议，2025年4月1日借的钱。"}]}]}}
    gold = [{"message": "m1", "text": "3月下旬", "iso": "2026-03", "precision": "month"},
            {"message": "m1", "text": "2025年4月1日", "iso": "2025-04-02", "precision": "day"}]
    report = DatesReport(split="t", gold=2)
    _score_reading(data, gold, report)
    assert (report.read, report.read_right, report.found) == (2, 1, 1), report.misses
