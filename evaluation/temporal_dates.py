"""World time read from the words: does the one reader of dates (``legaltext.dates``) find the
dates the temporal set's messages state, resolved as a person resolves them ("上周三", "月底",
"3月5号" against the day it was said), and does the matter chronology place each stated date on its
day, from a note of the message that stated it?

The gold is ``evaluation/temporal/<split>/dated_facts.json``, written by a helper from a brief
without the product's code: every calendar date a message states, with its ISO day, month or year.
Reading is scored per message: a date of the reader's matches a gold date of the same message with
the same ISO and precision whose words overlap its own. The chronology is scored per gold date of
day or month precision: the conversations are imported with the offline engine (one matter each,
rolled back) and the date counts as placed when an entry of the matter's chronology is dated by its
words at that ISO and precision and its note was made from that message.
"""
from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from evaluation.runner import create_world, import_renamed
from evaluation.temporal_scoring import FOLDER, SPLITS, load
from legaltext.dates import dates

#: What a gold date may be placed at in a chronology (a year alone is too coarse to place a fact).
PLACED_PRECISIONS = ("day", "month")


@dataclass
class DatesReport:
    split: str
    gold: int = 0  # dates the messages state
    read: int = 0  # dates the reader found (with an ISO day, week, month or year)
    found: int = 0  # gold dates the reader found, at the same ISO and precision
    read_right: int = 0  # dates of the reader's that are a gold date
    placeable: int = 0  # gold dates of day or month precision
    placed: int = 0  # of those, placed by the chronology from their message
    seconds: float = 0.0
    misses: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        def share(part: int, whole: int) -> str:
            return f"{part / whole:.3f} ({part}/{whole})" if whole else "n/a"

        return [
            f"dates in the words split={self.split}: {self.gold} stated, {self.seconds:.0f} s",
            f"  reading: precision {share(self.read_right, self.read)}, recall {share(self.found, self.gold)}",
            f"  chronology: stated dated facts placed on their day {share(self.placed, self.placeable)}",
        ]


def load_gold(split: str) -> list[dict[str, Any]]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    return json.loads((FOLDER / split / "dated_facts.json").read_text(encoding="utf-8"))["dates"]


def score_dates(split: str) -> DatesReport:
    """Both figures of ``split`` (the chronology's in a transaction that is rolled back)."""
    from infra.llm import offline_only

    data, gold = load(split), load_gold(split)
    report = DatesReport(split=split, gold=len(gold))
    started = timezone.now()
    _score_reading(data, gold, report)
    with offline_only(), transaction.atomic():
        _score_chronology(split, data, gold, report)
        transaction.set_rollback(True)
    report.seconds = (timezone.now() - started).total_seconds()
    return report


def _messages(data: dict[str, Any]) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    return {m["id"]: (m, c) for c in data["conversations"]["conversations"] for m in c["messages"]}


def _said_on(message: dict[str, Any]):
    return timezone.localtime(parse_datetime(message["timestamp"])).date()


def _score_reading(data: dict[str, Any], gold: list[dict[str, Any]], report: DatesReport) -> None:
    by_message: dict[str, list[dict[str, Any]]] = {}
    for item in gold:
        by_message.setdefault(item["message"], []).append(item)
    for message_id, (message, _conversation) in _messages(data).items():
        content = message["content"]
        read = [m for m in dates(content, _said_on(message)) if m.iso and m.precision]
        stated = by_message.get(message_id, [])
        matched: set[int] = set()
        for mention in read:
            report.read += 1
            hit = next((i for i, item in enumerate(stated)
                        if i not in matched and item["iso"] == mention.iso and item["precision"] == mention.precision
                        and any(start < mention.end and mention.start < end for start, end in _spans(content, item))),
                       None)
            if hit is None:
                report.misses.append(f"{message_id} read {mention.text!r} as {mention.iso} ({mention.precision}): not stated")
                continue
            matched.add(hit)
            report.read_right += 1
        report.found += len(matched)
        for i, item in enumerate(stated):
            if i not in matched:
                report.misses.append(f"{message_id} missed {item['text']!r} = {item['iso']} ({item['precision']})")


def _spans(content: str, item: dict[str, Any]) -> list[tuple[int, int]]:
    """Every place the gold date's words occur (a date said twice, "1月31日" inside "2026年1月31日")."""
    found, start = [], content.find(item["text"])
    while start >= 0:
        found.append((start, start + len(item["text"])))
        start = content.find(item["text"], start + 1)
    return found


def _score_chronology(split: str, data: dict[str, Any], gold: list[dict[str, Any]], report: DatesReport) -> None:
    from chronology.selectors import matter_chronology
    from memory.models import Matter, Message, Note

    payload = data["conversations"]
    conversations = payload["conversations"]
    users = sorted({c["user"] for c in conversations})
    world = {"firms": [{"slug": payload["firm"], "users": users,
                        "matters": [{"title": c["title"], "reference": c["id"], "assigned": [c["user"]]}
                                    for c in conversations]}]}
    firms, accounts = create_world(world, uuid.uuid4().hex[:8])
    import_renamed({"transcripts": [{**payload, "conversations": [{**c, "matter": c["id"]} for c in conversations]}]},
                   firms, accounts, None)
    firm = firms[payload["firm"]]
    matters = dict(Matter.objects.filter(firm=firm).values_list("reference", "pk"))
    external = dict(Message.objects.filter(firm=firm).values_list("pk", "external_id"))
    placed: dict[str, set[tuple[str, str, str]]] = {}  # conversation → (message, iso, precision)
    for conversation in conversations:
        chronology = matter_chronology(accounts[conversation["user"]], matters[conversation["id"]])
        made_from = {str(pk): ids for pk, ids in Note.objects.filter(
            pk__in=[e.note_id for e in chronology.entries if e.note_id]).values_list("pk", "source_message_ids")}
        points = placed.setdefault(conversation["id"], set())
        for entry in chronology.entries:
            if entry.kind != "fact" or entry.dated_by != "words":
                continue
            for pk in made_from.get(entry.note_id) or []:
                points.add((external.get(pk, ""), entry.label, entry.precision))
    messages = _messages(data)
    for item in gold:
        if item["precision"] not in PLACED_PRECISIONS:
            continue
        report.placeable += 1
        conversation = messages[item["message"]][1]["id"]
        if (item["message"], item["iso"], item["precision"]) in placed.get(conversation, set()):
            report.placed += 1
        else:
            report.misses.append(f"{item['message']} not placed: {item['text']!r} = {item['iso']} ({item['fact']})")

