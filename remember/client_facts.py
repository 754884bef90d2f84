"""The client's facts a model left out: the rule engine's floor under an LLM's extraction.

A small local model often keeps one item of a turn and drops the rest — "我叫王磊，…月租金8000元，
押金16000元" became only "房东不退押金是因为租约到期", so the later "更正：月租金是8500元" had no 8000
note to supersede (docs/write-path.md, "The client's facts floor"). After an LLM extraction, the
offline engine reads the client's message alone; each of its 事实 / 证据 items that states an
amount, a date or an identifier the model's items do not state (values the client rejects —
"不是8000元" — do not count; a date the model wrote as the client did, "去年3月15日", states the
day the rule engine resolved, "2025年3月15日") is added, marked ``origin="rules"``. The five-item limit then keeps the
most important items of both, the client's words first, with a reason for each one dropped.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date

from memory.categories import Category
from memory.corrections import REJECTED_VALUE_RE
from remember.extraction import MAX_ITEMS_PER_TURN, ExtractedItem, TurnText, extract_offline
from remember.extraction.grounding import with_names
from remember.extraction.items import most_important
from remember.routing.mentions import Mentions, dates_compatible
from remember.routing.slots import read_statement

#: ``ExtractedItem.origin`` of an item the rule engine added under an LLM's extraction.
RULES_ORIGIN = "rules"
#: The client's own categories: the only ones the floor adds.
_CLIENT_CATEGORIES = frozenset({Category.FACT.zh, Category.EVIDENCE.zh})
#: A normalised date of ``Mentions.dates``: "2025-03-15", "?-03-15" (no year said), "2026-02-?".
_DATE_VALUE = re.compile(r"^(?:\d{4}|\?)-(?:\d{2}|\?)-(?:\d{2}|\?)$")
_REJECTED_NUMBER = re.compile(r"(?:不是|\bnot\s+)\d[\d,.]*", re.IGNORECASE)
_BARE_NUMBER = re.compile(r"(?<![\d.])\d[\d,]*(?:\.\d+)?(?![\d.])")


def values_of(text: str) -> set[object]:
    """The amounts, dates and identifiers ``text`` states, normalised ('8,000元' = '8000元');
    a value it rejects ("不是8000元", "not 8000") is left out."""
    mentions: Mentions = read_statement(text).mentions
    return {*mentions.quantities, *mentions.dates, *mentions.ids}


def bare_numbers(text: str) -> set[float]:
    """The numbers ``text`` writes without a unit, but not the ones it rejects: the model's
    "押金是3000不是2000" states the client's 3000元 (the floor had added the correction again)."""
    return {float(n.replace(",", "")) for n in _BARE_NUMBER.findall(
        _REJECTED_NUMBER.sub(" ", REJECTED_VALUE_RE.sub(" ", text)))}


def is_stated(value: object, stated: set[object]) -> bool:
    """``value`` is among ``stated`` — a date also when a stated date names the same month and
    day, its year left unsaid or the same: the model's "去年3月15日" states the rule engine's
    "去年3月15日（2025年3月15日）" (without this, the floor added the client's sentence a second
    time, and a later correction revised one of the two copies and left the other current)."""
    if value in stated:
        return True
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "money":
        return value[1] in stated
    if not isinstance(value, str) or not _DATE_VALUE.match(value):
        return False
    _, month, day = value.split("-")
    return any(isinstance(other, str) and _DATE_VALUE.match(other) and dates_compatible(other, value)
               and other.split("-")[1:] == [month, day] for other in stated)


def missed_client_facts(
    items: list[ExtractedItem], user_msg: str, *, turn: TurnText, user_name: str = "", said_on: date | None = None
) -> list[ExtractedItem]:
    """The rule engine's client facts (from ``user_msg`` only) holding a value none of ``items``
    in a person's words states (live, the corrected 押金3000 was only in the model's advice note), named as the turn names the client, marked with the rules' origin."""
    stated: set[object] = set()
    for item in items:
        if item.speaker != "assistant":  # a value inside the answer's advice is not the client's fact
            stated |= values_of(item.content) | bare_numbers(item.content)
    missed: list[ExtractedItem] = []
    for item in extract_offline(user_msg, "", user_name=user_name, said_on=said_on):
        if item.category not in _CLIENT_CATEGORIES or item.speaker != "user":
            continue
        values = values_of(item.content)
        if values and not all(is_stated(value, stated) for value in values):
            missed.append(replace(item, content=with_names(item.content, turn), origin=RULES_ORIGIN))
            stated |= values
    return missed


@dataclass(frozen=True)
class WithClientFacts:
    """The turn's items after the floor, and one line per item it added (kept) or dropped."""

    items: list[ExtractedItem]
    added: list[str] = field(default_factory=list)  # the turn's ``added`` record
    dropped: list[str] = field(default_factory=list)  # refused: among the turn's ``rejected``


def with_client_facts(
    items: list[ExtractedItem], user_msg: str, *, turn: TurnText, user_name: str = "", said_on: date | None = None
) -> WithClientFacts:
    """``items`` with the client facts the model missed, at most ``MAX_ITEMS_PER_TURN`` by
    importance; and one reason per item added or dropped (for the turn's record)."""
    added = missed_client_facts(items, user_msg, turn=turn, user_name=user_name, said_on=said_on)
    if not added:
        return WithClientFacts(items)
    kept, dropped = most_important([*items, *added], MAX_ITEMS_PER_TURN)
    return WithClientFacts(
        kept,
        added=[f"added from the client's words (the model's items leave out its values): {item.content[:30]!r}"
               for item in added if item in kept],
        dropped=[f"dropped: over the limit of {MAX_ITEMS_PER_TURN} items per turn, less important: "
                 f"{item.content[:30]!r}" for item in dropped],
    )
