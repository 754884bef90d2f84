"""The note-truth set's dev split through the real write path (evaluation/note_truth):
no note calls anyone "用户" or "<login>说", the typed correction of the deposit supersedes it,
and the scorer counts what it claims to (a missed fact is listed)."""
from __future__ import annotations

import pytest

from evaluation import note_truth_scoring


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


def test_note_precision_counts_the_readers_verdicts_and_what_is_not_judged_yet(tmp_path):
    import json

    from evaluation import note_judgements

    notes = [{"origin": "d01", "status": "active", "category": "fact", "content": text, "sources": []}
             for text in ("押金3000元。", "押金2000元。", "月租4800元。")]
    (tmp_path / "dev").mkdir()
    verdicts = {note_judgements.note_key("d01", "active", "fact", "押金3000元。"): {"verdict": "true", "problems": []},
                note_judgements.note_key("d01", "active", "fact", "押金2000元。"): {
                    "verdict": "false", "problems": ["state"], "reason": "corrected to 3000"}}
    (tmp_path / "dev" / "judgements.json").write_text(json.dumps({"notes": verdicts}), encoding="utf-8")
    report = note_judgements.judge_notes("dev", notes, folder=tmp_path)

    assert (report.judged, report.judged_true, [n["content"] for n in report.unjudged]) == (2, 1, ["月租4800元。"])
    assert report.problems == {"state": 1} and "0.500 (1/2)" in report.lines()[0]
    # a note filed under another kind is another note for the reader
    assert note_judgements.note_key("d01", "active", "law", "押金3000元。") not in verdicts
    note_judgements.write_unjudged(tmp_path / "unjudged.json", "dev", report)
    written = json.loads((tmp_path / "unjudged.json").read_text(encoding="utf-8"))
    assert [n["content"] for n in written["notes"]] == ["月租4800元。"] and written["notes"][0]["key"]


def test_every_split_has_its_readers_verdicts():
    from evaluation.note_judgements import PROBLEMS, load_judgements

    for split in ("dev", "dev2", "dev3", "dev4", "outside_dev", "test", "test2"):
        verdicts = load_judgements(split)
        assert len(verdicts) > 90, split
        assert all(v["verdict"] in ("true", "false") for v in verdicts.values())
        assert all(set(v.get("problems") or []) <= set(PROBLEMS) for v in verdicts.values())
        assert all(v.get("problems") for v in verdicts.values() if v["verdict"] == "false"), split


@pytest.mark.parametrize("text, token, said", [
    ("On 10 January he paid RMB 128,000.", "8,000", False),   # 8,000 is no part of 128,000
    ("医疗费总共6万4。", "6万", False),                          # 6万4 is 64,000
    ("保险公司说可以赔6万了结。", "6万", True),
    ("the usage fee is 6,800.", "6,800", True),
    ("押金3000元，月租4800。", "3000", True),
    ("下周四（2026年2月26日）下午", "下周四", True),
])
def test_a_note_says_a_number_only_as_a_whole_number(text, token, said):
    assert note_truth_scoring.says(text, token) is said
