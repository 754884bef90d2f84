"""The words of a text that carry its point, and how much of one text another one says.

Chinese has no spaces, so a word here is every pair of neighbouring Chinese characters that
holds no function character ("月租", "租金"; not "的是", "我上"), and every English word of four
letters or more that is not a stop word. Values (amounts, dates) are left to ``values``: their
digits are no point. Two readers use these words: the correction rule that finds which stored
value a correction is about (``remember.routing.cued_slot``), and the extraction rule that
keeps a note as the client's only when its words are the client's (``remember.extraction.rules``).
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

#: Characters that carry no point of their own: a two-character word holding one says nothing
#: about which value is meant ("的是", "我上", "一下").
FUNCTION_CHARS = frozenset("的了是我你他她它们说在也都就又和与及或这那个一上下之其实应该准确刚才前面后面有误错对吗呢吧啊哦呀嗯"
                           "新旧原来再次还要把被给让从到为对于而且但所以如果因为已经")
_CJK_RE = re.compile(r"[\u4e00-\u9fff]+")
_WORD_RE = re.compile(r"[A-Za-z]{4,}")
_ENGLISH_STOP = frozenset({"that", "this", "with", "from", "have", "were", "what", "which", "sorry", "meant",
                           "actually", "correction", "instead", "rather", "before", "after", "about", "there",
                           "their", "they", "them", "will", "would", "should", "could", "been", "also", "into"})


def point_words(text: str, *, without: Iterable[tuple[int, int]] = ()) -> set[str]:
    """The two-character words (and longer English words) of ``text`` outside the ``(start,
    end)`` spans of ``without``, function characters left out."""
    kept, position = [], 0
    for start, end in sorted(without):
        kept.append(text[position:start])
        kept.append(" ")
        position = max(position, end)
    kept.append(text[position:])
    plain = "".join(kept)
    words = {word.lower() for word in _WORD_RE.findall(plain)} - _ENGLISH_STOP
    for run in _CJK_RE.findall(plain):
        for i in range(len(run) - 1):
            pair = run[i:i + 2]
            if not (set(pair) & FUNCTION_CHARS):
                words.add(pair)
    return words


def share_said(words: set[str], source: str) -> float:
    """The share of ``words`` that ``source`` says (1.0 for no words: nothing unsaid)."""
    if not words:
        return 1.0
    return len(words & _words_of(source)) / len(words)


@lru_cache(maxsize=16)
def _words_of(source: str) -> frozenset[str]:
    """A message's words, read once for all the items checked against it."""
    return frozenset(point_words(source))
