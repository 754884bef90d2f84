"""A correction that rejects a word, not a value, replaces that word in the stored note.

"不是出租车，是网约车", "是二审，不是一审", "it was a van, not a taxi": the client names the thing
that was wrong and the thing that is right. Neither is a sum, a day or a count (those are
``rejected``'s), nor a name written one character otherwise (``respelled``'s), so no reader of
values can tell them — but the words themselves can: the stored note that says the rejected
word, once, is revised with the new one ("…被一辆网约车右转时撞了…") and supersedes it; the old
note stays in history.

Precision first: the reader (``legaltext``) must find both words of one correction; neither may
hold a value; each is short (a word, not a clause) and neither holds the other; the new
statement must say the new word, the stored note must say the rejected word exactly once and
not the new one, and a person the correction's sentence names must be one the stored note names.
"""
from __future__ import annotations

import re

import legaltext
from legaltext.values import values
from remember.routing.mentions import read_mentions

#: The longest word a correction may reject: longer is a clause ("不是我不想去，是没时间").
MAX_WORD_CHARS = 8
#: The shortest: one Chinese character is part of too many words to be found alone.
MIN_WORD_CHARS = 2
#: Words that are no thing said before but the speaker's stance ("不是很清楚", "不是说…").
_NO_THING_RE = re.compile(r"^(?:很|太|说|要|想|会|能|可以|应该|因为|为了|所以|这样|那样|这个|那个|我|你|他|她|它)")
_ARTICLE_RE = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)


def _word(text: str | None) -> str | None:
    """The correction's side as a word the note could hold, or None."""
    word = (text or "").strip().strip("“”\"'「」")
    if not (MIN_WORD_CHARS <= len(word) <= MAX_WORD_CHARS) or _NO_THING_RE.match(word):
        return None
    if values(word) or re.search(r"\d", word):
        return None  # a value is ``rejected``'s
    return word


def _stored_form(word: str, old_text: str) -> str:
    """``word`` as the stored note writes it: without its English article when only that is found."""
    if old_text.count(word) == 0 and _ARTICLE_RE.match(word):
        return _ARTICLE_RE.sub("", word)
    return word


#: The day a relative word was resolved to when it was noted ("下个月（2026年2月）"): it goes with the word.
_RESOLVED_RE = re.compile(r"（[^（）]{4,20}）")


def _replaced(old_text: str, old: str, new: str) -> str:
    """``old_text`` with ``old`` replaced by ``new``: the day ``old`` was resolved to goes with it, and
    words ``new`` repeats from what follows ``old`` are said once ("“下个月一定付”" corrected by "是“春节前
    一定付”，不是下个月" is "“春节前一定付”", not "春节前一定付一定付")."""
    start = old_text.index(old)
    end = start + len(old)
    resolved = _RESOLVED_RE.match(old_text, end)
    if resolved:
        end = resolved.end()
    after = old_text[end:]
    for size in range(len(new) - MIN_WORD_CHARS, 0, -1):
        if after.startswith(new[-size:]):
            new = new[:-size]
            break
    return old_text[:start] + new + old_text[end:]


def revised_by_replaced_word(said: str, new_text: str, old_text: str) -> tuple[str, str] | None:
    """The stored note ``old_text`` with the word rejected in ``said`` replaced, and why — or None."""
    fits = []
    reading = legaltext.read(said)
    for correction in reading.corrections:
        old, new = _word(correction.old), _word(correction.new)
        if old is None or new is None or old in new or new in old:
            continue
        old, new = _stored_form(old, old_text), _stored_form(new, new_text)
        if new not in new_text or old_text.count(old) != 1 or new in old_text:
            continue
        sentence = next((said[s.start:s.end] for s in reading.sentences if s.start <= correction.start < s.end),
                        correction.text)
        if read_mentions(sentence).people - read_mentions(old_text).people:
            continue  # "李明坐的不是出租车…" corrects no note that does not name 李明
        fits.append((old, new, correction.text))
    if len(fits) != 1:
        return None
    old, new, words = fits[0]
    return _replaced(old_text, old, new), f"the client says it was {new}, not {old} (“{words[:60]}”)"
