"""A correction that names the value it rejects replaces that value in the stored note.

"不是住院7天，是住院9天", "刚才说错了，一个月是休息四天，不是两天", "上次说医疗费23600元，…其实是25180元",
"the contract ends on 31 July 2026, not 30 June": the client says which value was wrong and
which is right, so no slot lexicon is needed to know what to replace — the stored note that
states the rejected value, once, is revised with the new one ("左手腕骨折，住院9天，医疗费花了
23600元。") and supersedes it; the old note stays in history.

Precision first: the reader (``legaltext``) must find both values, each one value of
compatible kinds; the new statement must state the new value (only the item that carries the
correction revises); the stored note must state the rejected value exactly once, in a clause stating no other
value of its kind, and must not already state the new one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import legaltext
from legaltext.sentences import span_around
from legaltext.values import Value, money_verb, replaced_in, the_value, values
from remember.routing.mentions import read_mentions


@dataclass(frozen=True)
class Rejection:
    """A value the client rejected and the one said in its place."""

    old: Value
    new: Value
    said: str  # the correction's words, for the routing decision's reason


def rejections(said: str) -> list[Rejection]:
    """The corrections of ``said`` that state both the rejected and the new value."""
    found = []
    for correction in legaltext.read(said).corrections:
        if not (correction.old and correction.new):
            continue
        old = the_value(correction.old)
        new = the_value(correction.new) or (_the_one_like(correction.new, old) if old else None)
        if old is None or new is None or old.matches(new):
            continue
        if (old.kind == "date") != (new.kind == "date"):
            continue
        found.append(Rejection(old, new, correction.text))
    return found


def _the_one_like(text: str, old: Value) -> Value | None:
    """The value of ``text`` that stands for ``old`` when the new words hold more than one
    ("8,500 a month" for "9,500"; "3幢602室" for "502"): the only one of its kind, or of its kind
    and number of digits."""
    like = [v for v in values(text) if _compatible(v, old)]
    if len(like) > 1:
        like = [v for v in like if len(re.sub(r"\D", "", v.text)) == len(re.sub(r"\D", "", old.text))]
    return like[0] if len(like) == 1 else None


def _compatible(a: Value, b: Value) -> bool:
    return (a.kind == "date") == (b.kind == "date") and (
        a.kind == b.kind or {a.kind, b.kind} <= {"money", "number"})


def cued_pairs(said: str) -> list[tuple[Value, Value, str]]:
    """Two values of one kind in the sentence of a correction that does not state both ("更正一下，
    他说的12000是到手的，税前月薪是15000", "车价是126500元，刚才说错了"): one is the stored value and
    the other its replacement, which is which the stored note tells (``revised_by_rejection``)."""
    reading = legaltext.read(said)
    pairs = []
    for correction in reading.corrections:
        if correction.old and correction.new:
            continue
        sentence = next((s for s in reading.sentences if s.start <= correction.start < s.end), None)
        if sentence is None:
            continue
        for window in (said[sentence.start:sentence.end], said[correction.end:sentence.end]):
            stated = values(window)
            if len(stated) == 2 and _compatible(*stated) and not stated[0].matches(stated[1]):
                pairs.append((stated[0], stated[1], correction.text))
                break
    return pairs


def _placed(said: str, stored: list[Value]) -> list[Rejection]:
    """The rejections of ``said``, and its cued pairs oriented by what the stored note states."""
    found = rejections(said)
    for a, b, cue in cued_pairs(said):
        for old, new in ((a, b), (b, a)):
            if any(v.matches(old) for v in stored) and not any(v.matches(new) for v in stored):
                found.append(Rejection(old, new, cue))
    return found


#: Where a clause of a stored note ends (a colon does not end one here: "3万，不是2万：…").
_CLAUSE_END_RE = re.compile(r"[，,；;。！!？?\n]")


def _clause_holds_another(text: str, hit: Value, stored: list[Value]) -> bool:
    """Whether the clause of ``text`` holding ``hit`` states another value of its kind that could
    be the one meant: a bare number only when written with as many digits ("湖墅南路88号3幢502室":
    88 and 3 are not the room 502; "从7000元涨到8000元": either could be)."""
    start, end = span_around(text, hit.start, hit.end, _CLAUSE_END_RE)
    kinds = {hit.kind} | ({"money", "number"} if hit.kind in ("money", "number") else set())

    def could_be_meant(v: Value) -> bool:
        if "number" not in (v.kind, hit.kind):
            return True
        return len(re.sub(r"\D", "", v.text)) == len(re.sub(r"\D", "", hit.text))

    return any(v is not hit and v.kind in kinds and start <= v.start and v.end <= end and could_be_meant(v)
               for v in stored)


def another_money_point(old_text: str, start: int, said: str) -> bool:
    """The stored sum at ``start`` is the object of a verb the correction never says ("要扣2000元押金"
    against "押金是3000不是2000"): a sum deducted, repaid or paid is another point than the one
    corrected."""
    verb = money_verb(old_text, start)
    return verb is not None and verb not in said


def _another_day(stored: Value, rejected: Value) -> bool:
    """A rejected day ("不是5月31日") is no stored month that names no day ("2024年5月借给…"): a month
    matches a day only in the other direction ("不是7月" of "2021年7月1日")."""
    return stored.kind == rejected.kind == "date" and stored.magnitude[2] is None and rejected.magnitude[2] is not None


def revised_by_rejection(said: str, new_text: str, old_text: str, *,
                         unnamed_only: bool = False) -> tuple[str, str] | None:
    """The stored note ``old_text`` with the value the client rejected in ``said`` replaced by
    the new one, and why — or None (see the module docstring). ``unnamed_only``: only a
    correction whose words name no person ("说对方一共还了3万，不是2万", not "李明的工资是8000，不是6000")."""
    new_values = values(new_text)
    stored = values(old_text)
    for rejection in _placed(said, stored):
        if unnamed_only and read_mentions(rejection.said).people:
            continue
        if not any(v.matches(rejection.new) for v in new_values):
            continue
        if any(v.matches(rejection.new) for v in stored):
            continue
        hits = [v for v in stored if v.matches(rejection.old) and not _another_day(v, rejection.old)]
        resolutions = [v for v in hits if _resolves(old_text, v, hits)]  # "20 March (20 March 2026)"
        hits = [v for v in hits if v not in resolutions]
        if len(hits) != 1 or (resolutions and rejection.old.text not in rejection.said):
            continue  # a resolved day is revised only for a rejection that names it ("6 April, not 20 March")
        hit = hits[0]
        if _clause_holds_another(old_text, hit, [v for v in stored if v not in resolutions]):
            continue  # "月租金从7000元涨到8000元": which of the two is wrong cannot be told
        if another_money_point(old_text, hit.start, said):
            continue  # "押金是3000不是2000" corrects no "要扣2000元押金"
        text = old_text
        resolved = _RESOLUTION_AFTER_RE.match(text[hit.end:]) if resolutions else None
        if resolved:  # the day the rejected one was resolved to goes with it
            text = text[:hit.end] + text[hit.end + resolved.end():]
        revised = replaced_in(text, hit, rejection.new)
        return revised, f"the client rejects {rejection.old.text} for {rejection.new.text} (“{rejection.said[:60]}”)"
    return None


#: The resolution written after a day when it was noted: " (20 March 2026)", "（2026年3月20日）".
_RESOLUTION_AFTER_RE = re.compile(r"^\s?[（(][^（）()]{4,24}[）)]")


def _resolves(text: str, value, hits: list) -> bool:
    """``value`` is the bracketed resolution of another hit right before it ("20 March (20 March 2026)")."""
    return any(other.end <= value.start and re.fullmatch(r"\s?[（(]", text[other.end:value.start]) for other in hits
               if other is not value)


#: Characters a correction's statement must hold besides the correction itself to be kept as a
#: note of its own beside the revised one ("…，出院记录上写的是2月27日入院、3月8日出院").
MIN_REST_CHARS = 6
#: What a correction is said with, which carries nothing once the values are taken out.
_CORRECTION_FILLER_RE = re.compile(r"更正|刚才|之前|上次|说错了?|不是|而是|其实|实际上|是|为|一下|[\W\d_]", re.UNICODE)


def says_more_than_the_correction(text: str) -> bool:
    """Whether ``text`` says something besides its corrections (their cues and values)."""
    rest = text
    for correction in legaltext.read(text).corrections:
        for words in (correction.text, correction.new, correction.old):
            if words:
                rest = rest.replace(words, " ", 1)
    return len(_CORRECTION_FILLER_RE.sub("", rest)) >= MIN_REST_CHARS
