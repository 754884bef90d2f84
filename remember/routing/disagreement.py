"""Two statements that both stay current and contradict each other: the same slot with
another value ("3000 vs 2000"). Nothing is replaced; routing links the two notes 'contradicts'
and flags both until a person decides (docs/routing.md). Read with ``slots``' statements and
relations."""
from __future__ import annotations

import re

from remember.routing.mentions import Mentions
from remember.routing.slots import Kind, _anchor_conflict, compare, read_statement

#: A statement that adds to an earlier one ("要再扣1000元", "另外", "another $500") is not another
#: value of it.
_ADDITIVE = re.compile(r"再(?=[扣付交收借转加要收])|另外|额外|追加|\badditional(?:ly)?\b|\banother\b|\bextra\b",
                       re.IGNORECASE)
#: A wish, a demand or a bound ("希望…至少6万元", "wants at least $500") is not a value stated:
#: it disagrees with no stated value (only with another wish or demand of the same kind).
_MODAL = re.compile(r"希望|要求|主张|请求|打算|准备|至少|最多|不少于|不超过|不低于|不高于|否则"
                    r"|\bwants?\b|\bwish(?:es)?\b|\bdemands?\b|\basks? for\b|\bat least\b|\bat most\b"
                    r"|\bno (?:less|more) than\b", re.IGNORECASE)
#: Words the shorter statement must share with the longer: "押金7000元" and "扣2000元押金" share
#: only the attribute's words and are not one slot.
DISAGREEMENT_MIN_SHARED_WORDS = 4
#: Words of the shorter statement that may be missing from the longer one.
DISAGREEMENT_MAX_MISSING_WORDS = 1


def _disagreeing_values(new: Mentions, old: Mentions) -> str | None:
    """A unit in which each side gives a value the other does not: '3000 vs 2000'."""
    for unit in sorted({u for u, _ in new.quantities} & {u for u, _ in old.quantities}):
        a = {v for u, v in new.quantities if u == unit}
        b = {v for u, v in old.quantities if u == unit}
        if a - b and b - a:
            return f"{', '.join(f'{v:g}' for v in sorted(a - b))} vs {', '.join(f'{v:g}' for v in sorted(b - a))}"
    return None


def disagreement(newer_text: str, older_text: str) -> str | None:
    """Whether two statements that both stay current contradict each other — the same slot
    with another value — and the values ("3000 vs 2000"); None when they do not.

    Looser than an UPDATE, because nothing is replaced: "房东说…要扣2000元押金" and a later
    "房东今天改口了，…要扣3000元押金" are both true as what was said, yet a reader must see that
    they disagree ("" when they disagree without a number: a negation). Every relation ``compare`` would let replace a note counts (an UPDATE routing
    declined as less supported); otherwise both name the same slot attribute, no anchor says
    they are other events (ids, ordinals, people, statutes, dates), neither is negated alone,
    neither adds to the other ("再扣", "another"), a wish or a bound ("希望…至少") is not set
    against a stated value, they are not two events (two payments of
    different sums are two payments), each gives a value the other lacks, and the shorter
    statement's words are nearly all in the longer one."""
    relation = compare(newer_text, older_text)
    if relation.replaces:
        return _disagreeing_values(read_statement(newer_text).mentions, read_statement(older_text).mentions) or ""
    if relation.kind in (Kind.DUPLICATE, Kind.DISTINCT_EVENT):
        return None
    new, old = read_statement(newer_text), read_statement(older_text)
    if not new.attributes & old.attributes or new.negated != old.negated or (new.event and old.event):
        return None
    if _ADDITIVE.search(newer_text) or _ADDITIVE.search(older_text):
        return None
    if bool(_MODAL.search(newer_text)) != bool(_MODAL.search(older_text)):
        return None
    if _anchor_conflict(new.mentions, old.mentions, allow_dates=False):
        return None
    values = _disagreeing_values(new.mentions, old.mentions)
    if values is None:
        return None
    shorter, longer = sorted((new, old), key=lambda s: sum(s.words.values()))
    missing = sum((shorter.words - longer.words).values())
    shared = sum((shorter.words & longer.words).values())
    if missing > DISAGREEMENT_MAX_MISSING_WORDS or shared < DISAGREEMENT_MIN_SHARED_WORDS:
        return None
    return values
