"""Does recall answer "what was true then"? The temporal set (evaluation/temporal/, written by a
helper from a brief without the product's code) imported with the offline engine into a
throw-away firm (rolled back), each question asked as its account at its ``asked_at``.

Judged by value, not by message: a hit "answers" when its text (a note's content, or a raw
message's) states the question's ``expected_value``; it is "wrong first" when a hit stating the
``wrong_value`` (the current value for a past question, the old one for a current question) ranks
above the first that states the expected one. Three ways of asking are printed side by side:

- ``layered``: today's search, the question as it is (no date understood);
- ``product``: what the chat does (``chat.turns.held_at_of``, not a copy) — a question that names a day is searched
  for the notes whose fact held then (``valid_at``), any other as ``layered``;
- ``dense``, ``bm25``, ``rrf``: the raw baselines over the same account's messages.
"""
from __future__ import annotations

import json
import re
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from evaluation.runner import create_world, import_renamed

FOLDER = Path(__file__).resolve().parent / "temporal"
SPLITS = ("dev", "dev_advised", "test")
#: Splits of questions only, and the split whose conversations they are asked over.
QUESTIONS_ONLY = {"dev_advised": "dev"}
SYSTEMS = ("layered", "product", "dense", "bm25", "rrf")
K = 5


@dataclass
class TemporalReport:
    split: str
    questions: int = 0
    # system → category → list of (rank of the first hit stating the expected value or None, wrong first)
    outcomes: dict[str, dict[str, list[tuple[int | None, bool]]]] = field(
        default_factory=lambda: {s: defaultdict(list) for s in SYSTEMS})
    dated: int = 0  # questions the product read a day in
    misses: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        categories = sorted({c for by in self.outcomes.values() for c in by})
        out = [f"split={self.split}  questions={self.questions}  read at a day by the product: {self.dated}",
               f"{'system':8} {'category':14} {'n':>3} {'R@1':>6} {'R@5':>6} {'MRR':>6} {'wrong first':>11}"]
        for system in SYSTEMS:
            for category in [*categories, "overall"]:
                rows = (self.outcomes[system][category] if category != "overall"
                        else [row for c in categories for row in self.outcomes[system][c]])
                if not rows:
                    continue
                n = len(rows)
                r1 = sum(1 for rank, _ in rows if rank == 1) / n
                r5 = sum(1 for rank, _ in rows if rank is not None and rank <= K) / n
                mrr = sum(1 / rank for rank, _ in rows if rank is not None and rank <= K) / n
                wrong = sum(1 for _, first in rows if first) / n
                out.append(f"{system:8} {category:14} {n:>3} {r1:>6.3f} {r5:>6.3f} {mrr:>6.3f} {wrong:>11.3f}")
        return out


def load(split: str, folder: Path = FOLDER) -> dict[str, Any]:
    """The split's files (a missing one raises FileNotFoundError). A split of questions only
    (``dev_advised``) asks them over dev's conversations."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    own = folder / split
    conversations = folder / QUESTIONS_ONLY[split] if split in QUESTIONS_ONLY else own
    return {"conversations": json.loads((conversations / "conversations.json").read_text(encoding="utf-8")),
            "questions": json.loads((own / "questions.json").read_text(encoding="utf-8"))}


def says(text: str, value: str) -> bool:
    """Whether ``text`` states ``value`` ("4500元" is stated by "月租4500元" and by "4500"; a number
    only as a whole number: "14500" does not state "4500")."""
    number = re.match(r"\d[\d,.]*", value)
    if number is None:
        return value in text
    digits = number.group(0).rstrip(".,")
    unit = value[number.end():].strip()
    whole = rf"(?<![\d.,]){re.escape(digits)}(?![\d]|[.,]\d)"
    return bool(re.search(whole + re.escape(unit), text) or re.search(whole, text))


def judge(texts: list[str], question: dict[str, Any]) -> tuple[int | None, bool]:
    """(rank of the first text stating the expected value, whether one stating the wrong value
    came first)."""
    expected = next((i for i, text in enumerate(texts[:K], start=1) if says(text, question["expected_value"])), None)
    wrong = next((i for i, text in enumerate(texts[:K], start=1)
                  if says(text, question["wrong_value"]) and not says(text, question["expected_value"])), None)
    return expected, wrong is not None and (expected is None or wrong < expected)


def score(split: str) -> TemporalReport:
    from infra.llm import offline_only

    data = load(split)
    with offline_only(), transaction.atomic():
        report = _score(split, data)
        transaction.set_rollback(True)
    return report


def _hit_texts(result) -> list[str]:
    return [hit.note.content if hit.note is not None else hit.message.content for hit in result.hits]


def _score(split: str, data: dict[str, Any]) -> TemporalReport:
    from evaluation.baselines import BASELINES, indexes_for
    from infra.embeddings import get_embedder
    from chat.turns import held_at_of
    from legaltext.as_of import without_moment
    from memory.models import Message
    from recall import moment_first, search_memory

    payload = data["conversations"]
    accounts = sorted({c["user"] for c in payload["conversations"]})
    firms, users = create_world({"firms": [{"slug": payload["firm"], "users": accounts, "matters": []}]},
                                uuid.uuid4().hex[:8])
    import_renamed({"transcripts": [payload]}, firms, users, None)
    firm = firms[payload["firm"]]
    text_of = dict(Message.objects.filter(firm=firm).values_list("pk", "content"))
    questions = data["questions"]["questions"]
    indexes = indexes_for([users[name] for name in sorted({q["user"] for q in questions})])
    embedder = get_embedder()
    report = TemporalReport(split=split, questions=len(questions))
    for question in questions:
        user, asked = users[question["user"]], parse_datetime(question["asked_at"])
        layered = search_memory(user, question["question"], k=K)
        report.outcomes["layered"][question["category"]].append(judge(_hit_texts(layered), question))
        held = held_at_of(question["question"], said_on=timezone.localtime(asked).date(), user=user)
        if held.at is not None:  # read at the day (or the advice) the question names, as the chat reads it
            report.dated += 1
            product = search_memory(user, without_moment(question["question"], held.words), k=K, valid_at=held.at)
            if held.message is not None:
                product = moment_first(product, held.message, K)
        else:
            product = layered
        outcome = judge(_hit_texts(product), question)
        report.outcomes["product"][question["category"]].append(outcome)
        if outcome[0] != 1:
            report.misses.append(f"{question['id']} {question['category']}: expected {question['expected_value']}, "
                                 f"first hits {[t[:40] for t in _hit_texts(product)[:2]]}")
        ranked = indexes[user.pk].rank(question["question"], embedder.embed_query(question["question"]))
        for system in BASELINES:
            report.outcomes[system][question["category"]].append(
                judge([text_of.get(pk, "") for pk in ranked[system]], question))
    return report
