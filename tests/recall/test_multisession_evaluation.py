"""evaluate_memory end to end on a slice of the multi-session set: the real import path, real
search as each user, the raw baselines beside it, no leaks, nothing left behind."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from evaluation.multisession import MUST_NOT, load_set
from evaluation.multisession.runner import SYSTEMS, run_evaluation
from memory.models import Firm, Message
from recall import search_memory

pytestmark = [pytest.mark.django_db, pytest.mark.end_to_end]

# Morales intake + correction (emma), Zhao intake + correction (wang), the walled Greenway review
# (zhou) and another firm's look-alike deposit case (dave).
SLICE = ["emma-s01", "emma-s04", "wang-s01", "wang-s04", "zhou-s01", "dave-s01"]


@pytest.fixture(scope="module")
def slice_set():
    return load_set().select(sessions=SLICE, limit=3)


def test_slice_covers_every_category_and_both_languages(slice_set):
    groups = {(q["category"], q["language"]) for q in slice_set.questions}
    assert {category for category, _ in groups} == {
        "single_hop", "multi_hop", "temporal", "corrected", "history", MUST_NOT}
    assert {language for _, language in groups} == {"zh", "en"}


def test_slice_runs_end_to_end_without_leaks_and_rolls_back(slice_set):
    firms_before, messages_before = Firm.objects.count(), Message.objects.count()
    report = run_evaluation(slice_set)
    assert report.leaks == 0, report.lines()
    assert report.messages == sum(len(c["messages"]) for _, c in slice_set.conversations())
    assert report.notes_stored > 0  # the write path ran (Chinese turns give notes offline)
    recall_questions = [o for o in report.outcomes if o.question["category"] != MUST_NOT]
    for outcome in recall_questions:
        assert set(outcome.scores) == set(SYSTEMS)
        for figures in outcome.scores.values():
            assert figures["r@5"] <= figures["r@10"]
            assert 0.0 <= figures["mrr"] <= 1.0
    # On a slice this small the raw baselines find almost every answer: the harness can succeed.
    overall = next(row for row in report.rows() if row["category"] == "all" and row["language"] == "all")
    assert overall["rrf"]["r@10"] >= 0.8, report.lines()
    assert overall["bm25"]["r@10"] >= 0.7, report.lines()
    assert overall["dense"]["r@10"] >= 0.7, report.lines()
    # Chinese answers are recalled by the product through its notes.
    chinese = [o for o in recall_questions if o.question["language"] == "zh"]
    assert any(o.scores["product"]["r@10"] == 1.0 for o in chinese), report.lines()
    assert Firm.objects.count() == firms_before
    assert Message.objects.count() == messages_before


def test_the_same_figures_twice():
    small = load_set().select(sessions=["wang-s01", "wang-s04"], limit=2)
    first, second = run_evaluation(small), run_evaluation(small)
    assert first.rows() == second.rows()


def test_kept_evaluation_data_stays_invisible_to_outsiders(world):
    """With --keep the imported firms stay; charlie, alice and bob (other firms) recall none of it."""
    report = run_evaluation(load_set().select(sessions=["wang-s01", "dave-s01"], limit=1), keep=True)
    assert report.leaks == 0
    eval_firms = set(Firm.objects.filter(slug__startswith="eval-").values_list("pk", flat=True))
    assert eval_firms
    for outsider in (world.charlie, world.alice, world.bob):
        for query in ("赵敏的加班费和打卡截图", "陈露的押金被扣了多少"):
            hits = search_memory(outsider, query, k=10).hits
            sources = {pk for hit in hits for pk in hit.source_message_ids}
            assert not Message.objects.filter(pk__in=sources, firm_id__in=eval_firms).exists(), outsider
            notes = [getattr(hit, "note", None) for hit in hits]
            assert not [note for note in notes if note is not None and note.firm_id in eval_firms], outsider


def test_command_prints_product_beside_baselines_and_writes_json(tmp_path, capsys):
    target = tmp_path / "figures.json"
    call_command("evaluate_memory", "--set", "multisession", "--sessions", "emma-s01,zhou-s01,dave-s02", "--limit", "1",
                 "--json", str(target), "--losses")
    out = capsys.readouterr().out
    for word in ("product", "rrf", "dense", "bm25", "R@5", "R@10", "MRR", "single_hop", "must_not_recall"):
        assert word in out
    assert "leaks: 0" in out
    figures = json.loads(target.read_text(encoding="utf-8"))["multisession"]["all"]
    assert figures["leaks"] == 0
    assert {row["category"] for row in figures["rows"]} >= {"single_hop", MUST_NOT, "all"}
    assert all("product_returned" in q and "product_kinds" in q and "rrf_returned" in q for q in figures["questions"])
    # --losses lists exactly the questions where the product is below raw RRF at 10
    losses = [line for line in out.splitlines() if line.startswith("LOSS ")]
    recall_rows = [q for q in figures["questions"] if q["scores"]]
    assert len(losses) == sum(q["scores"]["product"]["r@10"] < q["scores"]["rrf"]["r@10"] for q in recall_rows)


def test_command_shows_one_questions_top_10_and_the_halves(tmp_path, capsys):
    target = tmp_path / "figures.json"
    call_command("evaluate_memory", "--set", "multisession", "--sessions", "emma-s01,zhou-s01,dave-s02", "--limit", "1",
                 "--json", str(target), "--show", "q001", "--show", "q999")
    out = capsys.readouterr().out
    figures = json.loads(target.read_text(encoding="utf-8"))["multisession"]["all"]
    first = next(q for q in figures["questions"] if q["id"] == "q001")
    shown = [line for line in out.splitlines() if line.startswith("  ") and line[3:5].strip().isdigit()]
    assert out.count("SHOW q001 ") == 1
    assert len(shown) == len(first["product_returned"]) > 0
    assert first["product_texts"][0][:20] in shown[0]  # the text of the product's first hit
    assert "SHOW q999: no such question in this run" in out
    halves = {half["half"]: half for half in figures["halves"]}
    recall = [q for q in figures["questions"] if q["scores"]]
    assert sum(half["questions"] for half in halves.values()) == len(recall)
    even = [q for q in recall if q["position"] % 2 == 0]
    assert halves["even"]["product"]["r@10"] == round(sum(q["scores"]["product"]["r@10"] for q in even) / len(even), 4)
    assert "half even" in out
    assert "half odd" in out


def test_command_rejects_a_bad_limit_and_an_empty_selection():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--limit"):
        call_command("evaluate_memory", "--limit", "0")
    with pytest.raises(CommandError, match="no question"):
        call_command("evaluate_memory", "--sessions", "no-such-session")


def test_command_runs_one_part_of_a_set_written_in_parts(tmp_path, capsys):
    target = tmp_path / "figures.json"
    call_command("evaluate_memory", "--set", "consultations", "--part", "part_b", "--sessions", "b-c1-s01,b-c1-s02",
                 "--limit", "1", "--json", str(target))
    figures = json.loads(target.read_text(encoding="utf-8"))["consultations"]
    asked = [q["id"] for split in figures.values() for q in split["questions"]]
    assert asked and all(question_id.startswith("b-") for question_id in asked)
    assert "leaks: 0" in capsys.readouterr().out


def test_command_rejects_an_unknown_part_and_a_part_of_a_whole_set():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="no part part_z"):
        call_command("evaluate_memory", "--set", "consultations", "--part", "part_z")
    with pytest.raises(CommandError, match="not to .*multisession"):
        call_command("evaluate_memory", "--part", "part_a")
