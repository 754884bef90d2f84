"""The multi-session evaluation set: three users' dated sessions (Chinese and English) and
questions with gold evidence message ids (see ``build.py`` for how the JSON is made).

    from showcase.evaluation.multisession import load_set
    data = load_set().select(sessions=["emma-s01"], limit=3)
"""
from __future__ import annotations

import copy
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

HERE = Path(__file__).parent
CATEGORIES = ("single_hop", "multi_hop", "temporal", "corrected", "history", "must_not_recall")
MUST_NOT = "must_not_recall"
LANGUAGES = ("zh", "en")


@dataclass
class EvaluationSet:
    world: dict[str, Any]  # {"firms": [{"slug", "name", "users", "matters": [{"reference", "title", "assigned"}]}]}
    transcripts: list[dict[str, Any]]  # import_conversation payloads, one per firm
    questions: list[dict[str, Any]]  # {"id", "category", "language", "user", "question", "gold", "matter"?}

    def conversations(self) -> list[tuple[str, dict[str, Any]]]:
        """(firm slug, conversation) for every session."""
        return [(t["firm"], c) for t in self.transcripts for c in t["conversations"]]

    def message_ids(self) -> set[str]:
        return {m["id"] for _, c in self.conversations() for m in c["messages"]}

    def select(self, *, sessions: Iterable[str] | None = None, categories: Iterable[str] | None = None,
               limit: int | None = None) -> "EvaluationSet":
        """A slice: only these sessions (and the questions whose gold they hold), these
        categories, and at most ``limit`` questions per category and language."""
        data = copy.deepcopy(self)
        if sessions is not None:
            keep = set(sessions)
            for transcript in data.transcripts:
                transcript["conversations"] = [c for c in transcript["conversations"] if c["id"] in keep]
            data.transcripts = [t for t in data.transcripts if t["conversations"]]
            present = data.message_ids()
            data.questions = [q for q in data.questions if set(q["gold"]) <= present]
        if categories is not None:
            wanted = set(categories)
            data.questions = [q for q in data.questions if q["category"] in wanted]
        if limit is not None:
            taken: dict[tuple[str, str], int] = defaultdict(int)
            chosen = []
            for question in data.questions:
                group = (question["category"], question["language"])
                if taken[group] < limit:
                    taken[group] += 1
                    chosen.append(question)
            data.questions = chosen
        return data


def load_set(directory: Path | str = HERE) -> EvaluationSet:
    """Read world.json, transcript-*.json and questions.json from ``directory``."""
    directory = Path(directory)

    def read(name: str) -> Any:
        with open(directory / name, encoding="utf-8") as handle:
            return json.load(handle)

    world = read("world.json")
    transcripts = [read(f"transcript-{firm['slug']}.json") for firm in world["firms"]]
    questions = read("questions.json")["questions"]
    for position, question in enumerate(questions):  # for the even / odd halves (tune on one, check on the other)
        question.setdefault("position", position)
    return EvaluationSet(world=world, transcripts=transcripts, questions=questions)
