"""Sentences and clauses: where a text's statements begin and end, in Chinese and English.

``sentence_offsets`` cuts after 。！？；… and their ASCII forms (a full stop only before a space,
never in 3.5, "Dr." or "No."), and at line breaks, short quotes kept whole. ``sentences`` then
mends the cuts a line or page break made inside a statement: a clause is never cut from its tail
(a line ending in "，" or inside an article goes on; a next line opening with 不属于 / 但 /
除…外 / 不得 / shall not / except continues the one before).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

#: Pairs of quote marks; a straight double quote opens and closes alike.
PAIRS = {"“": "”", "「": "」", "『": "』", "‘": "’", "'": "'", '"': '"'}

#: Quotes kept whole when short: the marks that cannot be apostrophes or straight quotes.
_QUOTE_PAIRS = {opening: closing for opening, closing in PAIRS.items() if opening not in "'\""}
_CLOSERS = frozenset(_QUOTE_PAIRS.values())
_TERMINATORS = frozenset("。！？；!?;…")
_OPENING_BRACKETS = frozenset("（(")
_CLOSING_BRACKETS = frozenset("）)")
_MAX_QUOTE_CHARS = 200


def split_outside_quotes(text: str, is_boundary: Callable[[str, int], bool]) -> list[str]:
    """Split ``text`` after each boundary character that is not inside quotes."""
    return [text[start:end].strip() for start, end in split_offsets(text, is_boundary) if text[start:end].strip()]


def split_offsets(text: str, is_boundary: Callable[[str, int], bool]) -> list[tuple[int, int]]:
    """(start, end) of the pieces of ``text`` split after each boundary character that is not
    inside quotes.

    A closing quote right after a terminator ('他说：“不能退。”') ends the
    sentence with the quote kept; an unbalanced quote stops counting after
    200 characters so one stray '“' cannot swallow the rest of the text.
    Nothing splits inside brackets either: "（《民法典》第四百九十七条，《消费者权益保护法》第二十六条）"
    is one citation, not a clause cut at its comma. Newlines always split.
    """
    parts: list[tuple[int, int]] = []
    start = 0
    depth = 0
    ascii_open = False
    brackets = 0
    quote_len = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            parts.append((start, i))
            start, depth, ascii_open, brackets, quote_len = i + 1, 0, False, 0, 0
            i += 1
            continue
        if ch in _OPENING_BRACKETS:
            brackets += 1
            quote_len = 0
        elif ch in _CLOSING_BRACKETS and brackets:
            brackets -= 1
        if ch in _QUOTE_PAIRS:
            depth += 1
            quote_len = 0
        elif ch in _CLOSERS and depth:
            depth -= 1
            if depth == 0 and not ascii_open and i > 0 and text[i - 1] in _TERMINATORS:
                parts.append((start, i + 1))
                start = i + 1
        elif ch == '"':
            ascii_open = not ascii_open
            quote_len = 0
        elif depth or ascii_open or brackets:
            quote_len += 1
            if quote_len > _MAX_QUOTE_CHARS:
                depth, ascii_open, brackets, quote_len = 0, False, 0, 0
        if not depth and not ascii_open and not brackets and is_boundary(text, i):
            end = i + 1
            while end < n and (text[end] in _TERMINATORS or text[end] in _CLOSERS
                               or text[end] in _STRAIGHT_CLOSERS and _ends_before_space(text, end + 1)):
                end += 1
            parts.append((start, end))
            start = end
            i = end
            continue
        i += 1
    parts.append((start, n))
    return parts


#: English abbreviations whose full stop does not end a sentence.
_ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "no", "inc", "ltd", "co"})


_LATIN_TAIL_RE = re.compile(r"[A-Za-z][A-Za-z.]*$")
#: Marks that close a quote after its full stop ("… RMB 99,000.' I never …").
_STRAIGHT_CLOSERS = frozenset("'\"’")


def _ends_before_space(text: str, i: int) -> bool:
    return i >= len(text) or text[i].isspace()


def sentence_boundary(text: str, i: int) -> bool:
    ch = text[i]
    if ch in _TERMINATORS:
        return True
    if ch == ".":  # ASCII full stop ends a sentence only before a space, not in 3.5 or 1. or "Dr."
        after_space = _ends_before_space(text, i + 1) or (
            i + 1 < len(text) and text[i + 1] in _STRAIGHT_CLOSERS and _ends_before_space(text, i + 2)
        )
        if not after_space or i == 0:
            return False
        if text[i - 1].isdigit():  # "1. " is a list number; "in 2023. " and "$3,500. " end sentences
            number = re.search(r"[\d,]+$", text[max(0, i - 12) : i])
            return number is not None and len(number.group(0)) >= 3 and i + 1 < len(text)
        # The Latin letters right before the stop, also straight after Chinese ("一张是No. 04618823").
        word = _LATIN_TAIL_RE.search(text, max(0, i - 6), i)
        return word is None or word.group(0).lower() not in _ABBREVIATIONS
    return False


def clause_boundary(text: str, i: int) -> bool:
    ch = text[i]
    if ch == "，":
        return True
    if ch == ",":  # not the thousands separator in 3,299
        return not (0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit())
    return False




#: The plain cut: after 。！？；!?; and at line breaks, and at an ASCII full stop before a space.
PLAIN_SENTENCE_END_RE = re.compile(r"(?<=[。！？!?；;])|\n|(?<=\.)\s+")


def plain_sentences(text: str) -> list[str]:
    """Sentences of ``text`` cut plainly (no quotes or abbreviations kept whole): how an item is
    compared with its turn, where a stricter cut would only find fewer sentences to compare."""
    return [s.strip() for s in PLAIN_SENTENCE_END_RE.split(text or "") if s and s.strip()]


def sentence_offsets(text: str) -> list[tuple[int, int]]:
    """(start, end) of each piece of ``text`` cut at sentence ends and line breaks."""
    return split_offsets(text, sentence_boundary)


def clauses(sentence: str) -> list[str]:
    """Comma-separated clauses of a sentence, ignoring commas inside quotes and numbers."""
    return [c.strip("，, ") for c in split_outside_quotes(sentence, clause_boundary) if c.strip("，, ")]


# --- the reader's sentences: mended across line and page breaks ---------------------------

#: A line opening with these continues the statement before it (a negation, an exception,
#: a proviso): "…墙面污渍，\n不属于乙方应当赔偿的损失范围。"
CONTINUATION_RE = re.compile(
    r"^\s*(?:不属于|不包括|不得|不应|不能|不再|不予|但|但是|除[^，。]{0,30}外|除非|否则|且|并且|或者|以及|及|和|"
    r"并|之外|以外|为限|为准|shall not|must not|may not|except|excluding|unless|provided that|but|and|or|nor)",
    re.IGNORECASE,
)
#: A sentence opening with these points back at the one before ("诉讼时效从此中断",
#: "当时是分两次转的", "协商不成的，由法院指定", "If it cannot prove both, …"): alone it cannot be read.
_BACK_REFERENCE_OPENING_RE = re.compile(
    r"^(?:从此|以此|由此|据此|对此|为此|就此|因此|此后|此时|届时|当时|这样|这种情况|这些|那样|该|上述|前述|否则|不然|同时"
    r"|(?:从|自)那(?:以后|时起|之后|天起)|那以后"
    r"|[\u4e00-\u9fff]{0,4}[不未没][\u4e00-\u9fff]{0,3}的(?=[，,]|属于|视为|应|由|可)"  # "做不到的属于…", "协商不成的，…"
    r"|(?:if (?:it|they|so|not)|otherwise|in that case|in this case|this|that|these|those|such)\b)",
    re.IGNORECASE,
)
#: Words anywhere in a sentence's first clause that point back ("建议先不要以此为由辞职").
_BACK_REFERENCE_WORD_RE = re.compile(r"以此|从此|由此|据此|对此|为此|就此")
#: A first clause ending on a verb of agreement with no object ("他已经在微信里确认了"): what was
#: agreed is in the sentence before.
_OBJECTLESS_END_RE = re.compile(r"(?:确认|同意|答应|认可|承认)了?$")


def refers_back(sentence: str) -> bool:
    """Whether ``sentence`` opens by pointing at the sentence before it: a note of it alone
    would be cut from what it is about (the note-truth readers judged such notes cut)."""
    text = sentence.strip()
    first = re.split(r"[，,。；;！!？?]", text, maxsplit=1)[0]
    return bool(_BACK_REFERENCE_OPENING_RE.match(text) or _BACK_REFERENCE_WORD_RE.search(first)
                or _OBJECTLESS_END_RE.search(first))


#: The start of an article of a contract or a law ("第八条 …", "Article 8", "8.").
ARTICLE_START_RE = re.compile(
    r"^\s*(?:第[一二三四五六七八九十百千零〇\d]+[条章节款]|(?:Article|Clause|Section)\s+\d+|\d+(?:\.\d+)*[.、])",
    re.IGNORECASE)
_ENDS_STATEMENT = frozenset("。！？!?；;…")
_OPEN_ENDS = frozenset("，,、：:（(“\"《-—")


@dataclass(frozen=True)
class Sentence:
    """A sentence with its span and what it does (``acts.act_of``)."""

    start: int
    end: int
    text: str
    act: str


def _continues(previous: str, following: str, in_article: bool) -> bool:
    """Whether the line ``following`` goes on with the statement ``previous`` a break ended."""
    previous = previous.rstrip()
    if not previous or not following.strip() or ARTICLE_START_RE.match(following):
        return False
    if previous[-1] in _ENDS_STATEMENT:
        return bool(CONTINUATION_RE.match(following)) and previous[-1] not in "。！？!?…"
    if previous[-1] in _OPEN_ENDS or CONTINUATION_RE.match(following):
        return True
    return in_article and not previous.endswith(".")


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of ``text``, whitespace trimmed, mended across line and
    page breaks (a form feed is a page break)."""
    plain = text.replace("\f", "\n")
    pieces = [(a, b) for a, b in sentence_offsets(plain) if plain[a:b].strip()]
    mended: list[tuple[int, int]] = []
    in_article = False
    for start, end in pieces:
        if mended:
            before_start, before_end = mended[-1]
            broke_at_line = "\n" in plain[before_end:start + 1] or plain[before_end - 1:before_end] == "\n"
            if broke_at_line and _continues(plain[before_start:before_end], plain[start:end], in_article):
                mended[-1] = (before_start, end)
                continue
        in_article = bool(ARTICLE_START_RE.match(plain[start:end])) or (in_article and not plain[start:end].lstrip().startswith(("第", "Article")))
        mended.append((start, end))
    spans = []
    for start, end in mended:
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        spans.append((start, end))
    return spans


#: Where a sentence ends, and where a clause ends inside it: the plain cut the correction rules
#: use to find the words around a value (``span_around``).
SENTENCE_END_RE = re.compile(r"[。！!？?；;\n]")
CLAUSE_END_RE = re.compile(r"[。！!？?；;\n，,：:]")


def span_around(text: str, start: int, end: int, ends: re.Pattern[str] = CLAUSE_END_RE) -> tuple[int, int]:
    """The span of the clause (with ``SENTENCE_END_RE``, the sentence) holding ``text[start:end]``;
    a mark inside it (the comma of "8,500") ends nothing."""
    first = max((m.end() for m in ends.finditer(text, 0, start)), default=0)
    last = next((m.start() for m in ends.finditer(text, end)), len(text))
    return first, last
