"""The multi-session evaluation set is what it claims: ≥ 300 questions over three users' dated
sessions weeks apart, Chinese and English, every category, gold ids that exist, and must-not
evidence that really sits where the asker may not look. No database needed."""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from datetime import datetime, timedelta

import pytest

from evaluation.multisession import HERE, MUST_NOT, load_set
from evaluation.multisession.build import SOURCE, build, load_sources, main

CJK = re.compile(r"[\u4e00-\u9fff]")
# This set's categories (the consultation set has more: evaluation.multisession.CATEGORIES).
CATEGORIES = ("single_hop", "multi_hop", "temporal", "corrected", "history", MUST_NOT)


@pytest.fixture(scope="module")
def data():
    return load_set()


@pytest.fixture(scope="module")
def messages(data):
    """message id → (firm, conversation, message)."""
    found = {}
    for firm, conversation in data.conversations():
        for message in conversation["messages"]:
            assert message["id"] not in found, f"message id {message['id']} appears twice"
            found[message["id"]] = (firm, conversation, message)
    return found


def test_committed_json_is_what_the_build_script_writes():
    texts = build()
    assert sorted(texts) == sorted(path.name for path in HERE.glob("*.json"))
    assert len(texts) == 4  # world, questions and one transcript per firm
    for name, text in texts.items():
        assert (HERE / name).read_text(encoding="utf-8") == text, name
    assert main(["--check"]) == 0


def test_the_source_files_are_all_there_and_all_read():
    """Every person's file set.json names exists; a missing or unnamed one stops the build."""
    sources = load_sources()
    assert {path.stem for path in SOURCE.glob("*.json")} == {"set", "emma", "wang", "lin", "others"}
    assert len(sources.sessions) >= 30 and len(sources.questions) >= 300


def test_a_missing_or_unnamed_source_file_fails_loudly(tmp_path):
    for path in SOURCE.glob("*.json"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    (tmp_path / "lin.json").rename(tmp_path / "lin_old.json")
    with pytest.raises(ValueError, match="lin_old"):
        load_sources(tmp_path)
    (tmp_path / "lin_old.json").unlink()
    with pytest.raises(FileNotFoundError, match="lin.json"):
        load_sources(tmp_path)
    (tmp_path / "set.json").unlink()
    with pytest.raises(FileNotFoundError, match="set.json"):
        load_sources(tmp_path)


def test_a_misspelt_field_fails_loudly(tmp_path):
    for path in SOURCE.glob("*.json"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    emma = json.loads((tmp_path / "emma.json").read_text(encoding="utf-8"))
    emma["questions"][0]["matters"] = emma["questions"][0].pop("gold")
    (tmp_path / "emma.json").write_text(json.dumps(emma, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ValueError, match="emma.json question 1"):
        load_sources(tmp_path)


def test_size_categories_and_languages(data, messages):
    questions = data.questions
    assert len(questions) >= 300
    assert 600 <= len(messages) <= 900
    by_category = Counter(q["category"] for q in questions)
    assert set(by_category) == set(CATEGORIES)
    assert all(count >= 25 for count in by_category.values()), by_category
    for category in CATEGORIES:
        languages = Counter(q["language"] for q in questions if q["category"] == category)
        assert languages["zh"] >= 10, (category, languages)
        assert languages["en"] >= 10, (category, languages)
    assert len({q["id"] for q in questions}) == len(questions)


def test_question_language_matches_its_text(data):
    for question in data.questions:
        has_chinese = bool(CJK.search(question["question"]))
        assert has_chinese == (question["language"] == "zh"), question


def test_three_users_with_ten_dated_sessions_weeks_apart(data):
    sessions = defaultdict(list)
    for _, conversation in data.conversations():
        times = [datetime.fromisoformat(m["timestamp"]) for m in conversation["messages"]]
        assert times == sorted(times), conversation["id"]
        sessions[conversation["user"]].append(times[0])
    askers = {q["user"] for q in data.questions}
    assert len(askers) >= 3
    for user in askers:
        starts = sorted(sessions[user])
        assert len(starts) >= 10, user
        gaps = [later - earlier for earlier, later in zip(starts, starts[1:])]
        assert min(gaps) >= timedelta(days=7), (user, min(gaps))
        assert starts[-1] - starts[0] >= timedelta(days=120), user


def test_an_english_user_a_chinese_user_and_a_mixed_one(data):
    text_by_user = defaultdict(list)
    for _, conversation in data.conversations():
        text_by_user[conversation["user"]].extend(m["content"] for m in conversation["messages"])
    share = {user: sum(bool(CJK.search(t)) for t in texts) / len(texts) for user, texts in text_by_user.items()}
    assert share["emma"] == 0.0
    assert share["wang"] == 1.0
    assert 0.2 < share["lin"] < 0.8


def test_gold_ids_exist_and_are_user_messages(data, messages):
    for question in data.questions:
        assert question["gold"], question["id"]
        for message_id in question["gold"]:
            assert message_id in messages, (question["id"], message_id)
            assert messages[message_id][2]["role"] == "user", (question["id"], message_id)
        if question["category"] == "multi_hop":
            assert len(set(question["gold"])) >= 2, question["id"]


def _may_see(data, user: str, firm: str, conversation: dict) -> bool:
    """The product's rule: one's own conversations; colleagues' case notes only on assigned matters."""
    firms_of = {name: spec["slug"] for spec in data.world["firms"] for name in spec["users"]}
    if firms_of[user] != firm:
        return False
    if conversation["user"] == user:
        return True
    matters = {m["reference"]: m for spec in data.world["firms"] for m in spec["matters"]}
    return conversation.get("matter") is not None and user in matters[conversation["matter"]]["assigned"]


def test_recall_questions_ask_about_the_askers_own_conversations(data, messages):
    for question in data.questions:
        if question["category"] == MUST_NOT:
            continue
        for message_id in question["gold"]:
            _, conversation, _ = messages[message_id]
            assert conversation["user"] == question["user"], (question["id"], message_id)
        if question.get("matter"):
            assert all(messages[m][1].get("matter") == question["matter"] for m in question["gold"]), question["id"]


def test_must_not_recall_evidence_is_behind_a_wall_or_another_users(data, messages):
    kinds = Counter()
    for question in (q for q in data.questions if q["category"] == MUST_NOT):
        for message_id in question["gold"]:
            firm, conversation, _ = messages[message_id]
            assert conversation["user"] != question["user"], question["id"]
            assert not _may_see(data, question["user"], firm, conversation), question["id"]
            kinds["other firm" if firm != "hartwell" else
                  "walled matter" if conversation.get("matter") else "another user's own"] += 1
    assert kinds["other firm"] >= 5, kinds
    assert kinds["walled matter"] >= 5, kinds
    assert kinds["another user's own"] >= 2, kinds


def test_corrected_and_history_questions_point_at_different_messages(data):
    """The current value and the earlier value are different turns, for every asking user."""
    for user in {q["user"] for q in data.questions}:
        corrected = {m for q in data.questions if q["user"] == user and q["category"] == "corrected" for m in q["gold"]}
        history = {m for q in data.questions if q["user"] == user and q["category"] == "history" for m in q["gold"]}
        assert len(corrected) >= 8, user
        assert len(history) >= 8, user
        assert len(corrected & history) <= 1, (user, corrected & history)


def test_questions_paraphrase_rather_than_copy_their_evidence(data, messages):
    for question in data.questions:
        text = question["question"].lower().strip("?？ ")
        for message_id in question["gold"]:
            assert text not in messages[message_id][2]["content"].lower(), question["id"]


def test_transcripts_are_in_import_conversation_format(data):
    for transcript in data.transcripts:
        assert set(transcript) == {"firm", "conversations"}
        for conversation in transcript["conversations"]:
            assert set(conversation) <= {"id", "user", "matter", "title", "messages"}
            for message in conversation["messages"]:
                assert set(message) == {"id", "role", "speaker", "timestamp", "content"}
                datetime.fromisoformat(message["timestamp"])
    json.dumps(data.world)  # plain JSON
