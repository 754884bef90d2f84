"""A question that asks for a value ("林晓雯的押金是多少？", "how much was the deposit?") is
answered first by a memory that states that value.

In the first hour in the browser (6 Dec) "林晓雯的押金是多少？" ranked the client's wish "林晓雯还想主张
迟延退还押金的利息" above the note "…押金是3000元…": both name the deposit, and the wish is closer in
words. A lawyer asking for the amount wants the amount. Only a small nudge, and only near the
top: the first of the best ``ANSWER_WINDOW`` slots whose text states a sum or number in the
clause naming the asked point is put first; nothing else moves.
"""
from __future__ import annotations

import re

from legaltext.acts import asked_point
from legaltext.sentences import span_around
from legaltext.values import values
from recall.fusion import Entry

#: How near the top the answering slot must already be.
ANSWER_WINDOW = 3
_AMOUNT_KINDS = frozenset({"money", "number"})
#: Where a clause ends (not at a number's "," of "3,000").
_CLAUSE_END = re.compile(r"[，；;。！!？?\n]|(?<!\d),|,(?!\d)")
def states_value_of(text: str, point: str) -> bool:
    """Whether ``text`` states a sum or number in a clause that names ``point``."""
    lowered = text.lower()
    found = [v for v in values(text) if v.kind in _AMOUNT_KINDS]
    for match in re.finditer(re.escape(point), lowered):
        start, end = span_around(text, match.start(), match.end(), _CLAUSE_END)
        if any(start <= v.start and v.end <= end for v in found):
            return True
    return False


def answer_first(slots: list[Entry], texts: dict, question: str) -> list[Entry]:
    """``slots`` with the first near-top slot that states the asked value put first."""
    point = asked_point(question)
    if point is None or not slots:
        return slots
    for index, slot in enumerate(slots[:ANSWER_WINDOW]):
        text = texts.get(slot.key)
        if text and states_value_of(text, point):
            if index == 0:
                return slots
            slot.fused = round(slots[0].fused + 1e-6, 6)
            return [slot, *slots[:index], *slots[index + 1:]]
    return slots
