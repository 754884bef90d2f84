"""Sets written outside the team in the import format itself (``conversations.json`` with one
firm and ``questions.json`` as a list of ``{id, user, question, category, gold_message_ids}``),
read into the ``EvaluationSet`` every evaluation command runs on.

The files are kept exactly as they were given (``outside_dev/``): nothing here rewrites them.
The category names are theirs with ``_`` for ``-``; the language is read off the question; the
gold's speaker off its message ids' roles.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

CJK = re.compile(r"[\u4e00-\u9fff]")


def is_outside_format(directory: Path) -> bool:
    return (directory / "conversations.json").exists() and not (directory / "world.json").exists()


def load_outside(directory: Path) -> dict[str, Any]:
    """``{"world", "transcripts", "questions"}`` of a set in the outside format."""
    payload = json.loads((directory / "conversations.json").read_text(encoding="utf-8"))
    questions = json.loads((directory / "questions.json").read_text(encoding="utf-8"))
    if isinstance(questions, dict):
        questions = questions["questions"]
    users = sorted({conversation["user"] for conversation in payload["conversations"]})
    roles = {m["id"]: m["role"] for c in payload["conversations"] for m in c["messages"]}
    world = {"firms": [{"slug": payload["firm"], "name": payload["firm"], "users": users, "matters": []}]}
    converted = []
    for position, question in enumerate(questions):
        gold = list(question["gold_message_ids"])
        unknown = [m for m in gold if m not in roles]
        if unknown:
            raise ValueError(f"question {question['id']}: gold {', '.join(unknown)} is no message of the set")
        speakers = {roles[m] for m in gold}
        converted.append({
            "id": question["id"], "user": question["user"], "question": question["question"],
            "category": question["category"].replace("-", "_"),
            "language": "zh" if CJK.search(question["question"]) else "en",
            "gold": gold, "gold_speaker": _speaker(speakers), "expected": question.get("note", ""),
            "position": position, **({"context": list(question["context"])} if question.get("context") else {}),
        })
    converted += _in_chinese(directory, converted)
    return {"world": world, "transcripts": [payload], "questions": converted}


IN_CHINESE = "english_in_chinese"


def _in_chinese(directory: Path, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The team's Chinese wording of the set's English questions (``english_in_chinese.json``),
    each asked as a question of its own on the same gold: what the same question finds in
    either language."""
    path = directory / "english_in_chinese.json"
    if not path.exists():
        return []
    wording = json.loads(path.read_text(encoding="utf-8"))["questions"]
    by_id = {question["id"]: question for question in questions}
    unknown = sorted(set(wording) - set(by_id))
    if unknown:
        raise ValueError(f"english_in_chinese.json names no question of the set: {', '.join(unknown)}")
    return [{**by_id[qid], "id": f"{qid}-zh", "question": text, "category": IN_CHINESE, "language": "zh",
             "position": len(questions) + offset}
            for offset, (qid, text) in enumerate(wording.items())]


def _speaker(roles: set[str]) -> str | None:
    if not roles:
        return None
    if roles == {"assistant"}:
        return "assistant"
    return "user" if roles == {"user"} else "both"
