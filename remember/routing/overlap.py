"""Character-bigram overlap and the coarse contradiction signal that persona traits use.

Persona evidence (``remember.persona``) decides whether two preference statements
are contrary traits with these; note routing uses the finer slot comparison in
``remember.routing.slots``.
"""
from __future__ import annotations

import re

from remember.extraction import extract_law_refs

SAME_STATEMENT_JACCARD = 0.7
_NEGATION = re.compile(r"不|没|未|拒绝|否认|并非|无法|禁止")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def _bigrams(text: str) -> set[str]:
    chars = [c for c in _NUMBER.sub("", text.lower()) if c.isalnum()]
    return {a + b for a, b in zip(chars, chars[1:])} or set(chars)


def lexical_overlap(a: str, b: str) -> tuple[float, float]:
    """(Jaccard, overlap coefficient) of the two texts' character bigrams, digits ignored."""
    x, y = _bigrams(a), _bigrams(b)
    if not x or not y:
        return 0.0, 0.0
    common = len(x & y)
    return common / len(x | y), common / min(len(x), len(y))


def conflict_between(a: str, b: str) -> str | None:
    """Why two similar statements contradict each other, or None: the same statement with
    other numbers, or a negation on one side only; statements citing different articles
    never do. Coarse on purpose — persona traits only record the contrary evidence, they
    never supersede a note with it."""
    refs_a, refs_b = set(extract_law_refs(a)), set(extract_law_refs(b))
    if refs_a and refs_b and not refs_a & refs_b:
        return None
    numbers_a, numbers_b = set(_NUMBER.findall(a)), set(_NUMBER.findall(b))
    if numbers_a and numbers_b and numbers_a != numbers_b and lexical_overlap(a, b)[0] >= SAME_STATEMENT_JACCARD:
        return f"different numbers ({', '.join(sorted(numbers_b))} → {', '.join(sorted(numbers_a))})"
    if bool(_NEGATION.search(a)) != bool(_NEGATION.search(b)):
        return "negation on one side only"
    return None
