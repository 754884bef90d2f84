"""The outside development set (docs/evaluation.md): kept exactly as it was given, and read into
the evaluation's shape — every question, its category, language and gold speaker — or refused
with the question that names a message the set does not hold."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from evaluation.multisession import CATEGORIES, load_set

FOLDER = Path(__file__).resolve().parents[2] / "evaluation" / "outside_dev"


def test_the_set_is_read_whole():
    data = load_set(FOLDER)
    assert len(data.questions) == 84 + 12  # and the team's Chinese wording of the 12 English ones
    assert len(data.message_ids()) == 122
    assert [t["firm"] for t in data.transcripts] == ["consultations-dev"]
    assert data.world["firms"][0]["users"] == ["client_a", "client_b"]
    counts = Counter(q["category"] for q in data.questions)
    assert counts == {"single_hop": 22, "temporal": 14, "multi_hop": 12, "english": 11, "history": 7,
                      "corrected": 6, "preference": 6, "must_not_recall": 6, "english_in_chinese": 12}
    assert set(counts) <= set(CATEGORIES)
    by_id = {q["id"]: q for q in data.questions}
    assert by_id["b-e05"]["language"] == "en" and by_id["b-e05"]["gold_speaker"] == "assistant"
    assert by_id["a-s01"]["language"] == "zh" and by_id["a-s01"]["gold_speaker"] == "user"
    assert by_id["a-n01"]["gold"] == [] and by_id["a-n01"]["gold_speaker"] is None
    assert by_id["b-e05-zh"]["gold"] == by_id["b-e05"]["gold"] and by_id["b-e05-zh"]["language"] == "zh"


def test_a_gold_message_the_set_does_not_hold_is_refused(tmp_path: Path):
    copy = tmp_path / "outside"
    shutil.copytree(FOLDER, copy)
    questions = json.loads((copy / "questions.json").read_text(encoding="utf-8"))
    questions[0]["gold_message_ids"] = ["a99-u1"]
    (copy / "questions.json").write_text(json.dumps(questions, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="a99-u1"):
        load_set(copy)


def test_the_dialogue_set_keeps_each_questions_dialogue():
    """The dialogue-context set (written from a brief by a helper that never read the search):
    60 questions, each with 2–4 earlier lines, over 126 one-turn memories of six users."""
    data = load_set(FOLDER.parent / "dialogue_dev")
    assert len(data.questions) == 60 and len(data.message_ids()) == 252
    assert {q["category"] for q in data.questions} == {"dialogue"}
    assert all(2 <= len(q["context"]) <= 4 and len(q["gold"]) == 1 for q in data.questions)
    assert Counter(q["language"] for q in data.questions) == {"zh": 50, "en": 10}


@pytest.mark.subprocess
def test_the_dialogue_set_is_what_its_build_writes_from_its_source(tmp_path: Path):
    folder = FOLDER.parent / "dialogue_dev"
    done = subprocess.run([sys.executable, str(folder / "build.py"), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("conversations.json", "questions.json"):
        assert (tmp_path / name).read_bytes() == (folder / name).read_bytes(), name
