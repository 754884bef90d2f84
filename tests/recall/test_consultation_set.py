"""The consultation set (docs/evaluation.md): its JSON is what the builder writes from each part's
source.json (and a part that breaks a rule is refused), its split is fixed and stratified, and it
holds what the evaluation needs — at least 250 questions over at least four clients with ten
dated sessions each, a third of them about what the assistant said, every category in both
splits."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evaluation.consultations import build as build_module
from evaluation.consultations import split as split_module
from evaluation.multisession import NO_RECALL, load_set

FOLDER = Path(split_module.__file__).parent
# The parts the split names, not the folders found: a part whose folder or data is gone fails.
PARTS = [FOLDER / name for batch in split_module.BATCHES for name in batch]


@pytest.fixture(scope="module")
def data():
    return load_set(FOLDER)


@pytest.mark.parametrize("part", PARTS, ids=[p.name for p in PARTS])
def test_the_committed_json_is_what_the_build_writes(part: Path):
    texts, _ = build_module.build_part(part)
    assert sorted(texts) == sorted(p.name for p in part.glob("*.json") if p.name != "source.json")
    for name, text in texts.items():
        assert (part / name).read_text(encoding="utf-8") == text, name


def test_the_build_refuses_a_part_that_breaks_a_rule(tmp_path: Path):
    source = json.loads((PARTS[0] / "source.json").read_text(encoding="utf-8"))
    source["questions"][0]["gold"] = ["no-such-message"]
    (tmp_path / "part_x").mkdir()
    (tmp_path / "part_x" / "source.json").write_text(json.dumps(source, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(build_module.BuildError, match="no-such-message"):
        build_module.build_part(tmp_path / "part_x")


def test_the_split_is_the_committed_one_and_covers_every_kind_of_question(data):
    assert (FOLDER / "split.json").read_text(encoding="utf-8") == split_module.render()
    groups = Counter((q["category"], q["language"], q["split"]) for q in data.questions)
    for category, language in {(q["category"], q["language"]) for q in data.questions}:
        dev, test = groups[(category, language, "dev")], groups[(category, language, "test")]
        assert abs(dev - test) <= 1, (category, language, dev, test)
    assert {q["category"] for q in data.questions if q["split"] == "test"} == {q["category"] for q in data.questions}


def test_a_later_batch_moves_no_earlier_question_and_keeps_the_splits_even():
    written = split_module.questions()
    before = split_module.splits(written)
    added = [{"id": f"z-q{n:03d}", "category": category, "language": language, "part": "part_z"}
             for n, (category, language) in enumerate([("history", "zh")] * 5 + [("temporal", "en")] * 3
                                                      + [("advice", "zh")] * 4 + [("brand_new", "en")])]
    after = split_module.splits(written + added, batches=split_module.BATCHES + (("part_z",),))
    assert {qid: after[qid] for qid in before} == before
    counts = Counter((q["category"], q["language"], after[q["id"]]) for q in written + added)
    for category, language in {(q["category"], q["language"]) for q in written + added}:
        assert abs(counts[(category, language, "dev")] - counts[(category, language, "test")]) <= 1, (category, language)


def test_a_part_outside_every_batch_is_refused():
    with pytest.raises(ValueError, match="part_z"):
        split_module.splits([{"id": "z-q001", "category": "advice", "language": "zh", "part": "part_z"}])


def test_size_clients_sessions_and_share_about_the_assistant(data):
    questions = data.questions
    assert len(questions) >= 250
    sessions = Counter(conversation["user"] for _, conversation in data.conversations())
    assert sum(count >= 10 for count in sessions.values()) >= 4, sessions
    advice = [q for q in questions if q["category"] == "advice"]
    assert len(advice) >= len(questions) / 3
    assert all(q["gold_speaker"] == "assistant" for q in advice)
    assert sum(bool(q.get("context")) for q in questions) >= len(questions) / 3
    assert {q["language"] for q in questions} == {"zh", "en"}


def test_every_gold_message_exists_and_no_question_copies_its_gold(data):
    messages = {m["id"]: m["content"] for _, c in data.conversations() for m in c["messages"]}
    for question in data.questions:
        assert set(question["gold"]) <= set(messages), question["id"]
        assert bool(question["gold"]) == (question["category"] != "never_said"), question["id"]
        if question["category"] not in NO_RECALL:
            assert all(question["question"] not in messages[g] for g in question["gold"]), question["id"]
    world_users = {name for firm in data.world["firms"] for name in firm["users"]}
    assert {q["user"] for q in data.questions} <= world_users


def test_the_json_files_are_valid_utf8_json():
    paths = list(FOLDER.rglob("*.json"))
    assert len(paths) >= 1 + 5 * len(PARTS)  # split.json; per part source, world, questions, two transcripts
    for path in paths:
        json.loads(path.read_text(encoding="utf-8"))
