"""The multi-session evaluation set: three users' dated sessions (Chinese and English) and
questions with gold evidence message ids (the hand-written data is ``source/*.json``;
``build.py`` makes the JSON files read here from it).

    from evaluation.multisession import load_set
    data = load_set().select(sessions=["emma-s01"], limit=3)
"""
from __future__ import annotations

import copy
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

HERE = Path(__file__).parent
# Every category of either set, in the order tables print them (the consultation set adds what
# the assistant advised, preferences, quoted English, look-alike events and never-said questions).
CATEGORIES = ("advice", "single_hop", "multi_hop", "temporal", "preference", "quoted_english", "english",
              "english_in_chinese", "dialogue",
              "look_alike", "corrected", "history", "must_not_recall", "never_said")
MUST_NOT = "must_not_recall"
NEVER_SAID = "never_said"
# Questions that have nothing to recall: any hit standing for a must-not-recall question's gold
# is a leak; a never-said question's right answer is an empty result.
NO_RECALL = frozenset({MUST_NOT, NEVER_SAID})
LANGUAGES = ("zh", "en")
SPLITS = ("dev", "test")


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
               limit: int | None = None, split: str | None = None) -> "EvaluationSet":
        """A slice: only these sessions (and the questions whose gold they hold), these
        categories, this split (dev / test), and at most ``limit`` questions per category and
        language."""
        data = copy.deepcopy(self)
        if split is not None:
            data.questions = [q for q in data.questions if q.get("split") == split]
        if sessions is not None:
            keep = set(sessions)
            for transcript in data.transcripts:
                transcript["conversations"] = [c for c in transcript["conversations"] if c["id"] in keep]
            data.transcripts = [t for t in data.transcripts if t["conversations"]]
            present = data.message_ids()
            askers = {conversation["user"] for _, conversation in data.conversations()}
            # a question with nothing to recall (never said) stays when its asker's sessions do
            data.questions = [q for q in data.questions
                              if set(q["gold"]) <= present and (q["gold"] or q["user"] in askers)]
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


def load_set(directory: Path | str = HERE, *, parts: Sequence[str] | None = None) -> EvaluationSet:
    """Read world.json, transcript-*.json and questions.json from ``directory`` — or, for a set
    written in parts (``part_*/`` folders, e.g. the consultation set), every part merged (only
    the named ``parts`` when given: each part has firms of its own, so a part's figures alone are
    what they are in the whole set), with each question's ``split`` from the set's ``split.json``."""
    directory = Path(directory)
    found = sorted(path for path in directory.glob("part_*") if path.is_dir())
    if parts is not None:
        unknown = sorted(set(parts) - {path.name for path in found})
        if unknown:
            raise ValueError(f"no part {', '.join(unknown)} in {directory} (parts: {', '.join(p.name for p in found) or 'none'})")
        found = [path for path in found if path.name in parts]
    if found:
        loaded = [_load_one(part) for part in found]
        data = EvaluationSet(
            world={"firms": [firm for one in loaded for firm in one.world["firms"]]},
            transcripts=[t for one in loaded for t in one.transcripts],
            questions=[q for one in loaded for q in one.questions],
        )
        for position, question in enumerate(data.questions):
            question["position"] = position
    else:
        data = _load_one(directory)
    split_file = directory / "split.json"
    if split_file.exists():
        splits = json.loads(split_file.read_text(encoding="utf-8"))["splits"]
        for question in data.questions:
            question["split"] = splits[question["id"]]
    return data


def _load_one(directory: Path) -> EvaluationSet:
    from evaluation.outside_format import is_outside_format, load_outside

    if is_outside_format(directory):
        return EvaluationSet(**load_outside(directory))

    def read(name: str) -> Any:
        with open(directory / name, encoding="utf-8") as handle:
            return json.load(handle)

    world = read("world.json")
    transcripts = [read(f"transcript-{firm['slug']}.json") for firm in world["firms"]]
    questions = read("questions.json")["questions"]
    for position, question in enumerate(questions):  # for the even / odd halves (tune on one, check on the other)
        question.setdefault("position", position)
    return EvaluationSet(world=world, transcripts=transcripts, questions=questions)
