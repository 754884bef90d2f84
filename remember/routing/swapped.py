"""Two values said the wrong way round: "刚才比例说反了：签约时付的是70%，验收后付30%" against the
stored "合同约定签约时付30%，到货验收后30日内付70%".

The turn names no new value (both 70% and 30% are in the note), so neither the rejected-value rule
nor the slot rule sees a correction. It is one when the turn says the values were swapped
(``SWAP_CUE_RE``) and each of the two values is said beside the point words of the *other*
value's clause in the note (70% beside 签约, 30% beside 验收): the note's two values trade places
and the revised note supersedes it. Precision first: exactly one such pair, or nothing.
"""
from __future__ import annotations

import re

from legaltext.sentences import span_around
from legaltext.values import Value, values
from legaltext.words import point_words

#: Words that say two values were said the wrong way round.
SWAP_CUE_RE = re.compile(r"(?:说|看|写|记|弄|搞|填|算)反了|颠倒了|反过来了|\bthe other way round\b|\bswapped\b|\bmixed up the two\b",
                         re.IGNORECASE)
_SWAPPABLE = frozenset({"percent", "money", "number", "date"})


#: A month named by its number ("7月那次"): the point of a sum as much as a word is.
_MONTH_RE = re.compile(r"(?<!\d)\d{1,2}月")


def _words_around(text: str, value: Value, others: list[Value]) -> set[str]:
    start, end = span_around(text, value.start, value.end)
    spans = [(v.start - start, v.end - start) for v in others if start <= v.start and v.end <= end]
    return point_words(text[start:end], without=spans) | set(_MONTH_RE.findall(text[start:end]))


def revised_by_swap(said: str, old_text: str) -> tuple[str, str] | None:
    """The stored note with its two values traded, and why — or None (see the module docstring)."""
    cue = SWAP_CUE_RE.search(said)
    if cue is None:
        return None
    tail = said[cue.start():]
    told = [v for v in values(tail) if v.kind in _SWAPPABLE]
    stored = [v for v in values(old_text) if v.kind in _SWAPPABLE]
    pairs = []
    for i, a in enumerate(stored):
        for b in stored[i + 1:]:
            if a.kind != b.kind or a.matches(b):
                continue
            a_words, b_words = _words_around(old_text, a, stored), _words_around(old_text, b, stored)
            if not a_words or not b_words or a_words == b_words:
                continue
            # b said beside a's point, a beside b's: "签约时付的是70%" for the note's "签约时付30%"
            said_as_a = any(v.matches(b) and _words_around(tail, v, told) & (a_words - b_words) for v in told)
            said_as_b = any(v.matches(a) and _words_around(tail, v, told) & (b_words - a_words) for v in told)
            if said_as_a and said_as_b:
                pairs.append((a, b))
    if len(pairs) != 1:
        return None
    a, b = pairs[0]
    revised = old_text[:a.start] + b.text + old_text[a.end:b.start] + a.text + old_text[b.end:]
    return revised, f"the client says {a.text} and {b.text} were the wrong way round (“{tail[:60]}”)"
