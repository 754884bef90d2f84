"""Where a message quotes someone: the spans of “…”, 「…」, 『…』, "…", ‘…’ and '…'.

A quoted termination notice says "your labor contract will terminate"; rewritten in the third
person as if the client had said it, the note would read "the assistant's labor contract".
Quoted words are kept as they were said, and so they must be found, also when the quote runs
over several sentences and the message is cut into sentences before anything is rewritten
(``offline.text.split_sentences`` closes and reopens the quote around each piece).

A straight or curly single quote is also an apostrophe ("I'm", "three months' pay"): it
opens a quote only after a space, a bracket, a colon or a dash and before a letter or digit,
and closes one only after a non-space and before a space, punctuation or the end. A quote
that does not close within ``MAX_QUOTE_CHARS`` or before the end of its paragraph is a stray
mark, not a quote.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable

from legaltext.sentences import PAIRS  # noqa: F401 (the quote marks, read once)

#: Longest quote: a quoted clause or notice, not the rest of a pasted document.
MAX_QUOTE_CHARS = 2000
_APOSTROPHE_LIKE = frozenset("'’")
_CLOSING_MARKS = frozenset(PAIRS.values())
_OPENS_AFTER = frozenset(" \t([{:：—–-“\"，,")
_CLOSES_BEFORE = frozenset(" \t.,;:!?)]}—–-”\"。，；：！？")
_MARK_RE = re.compile("[" + re.escape("".join(sorted(set(PAIRS) | _CLOSING_MARKS))) + "\n]")


def _opens(text: str, i: int) -> bool:
    """Whether the mark at ``i`` can open a quote."""
    mark = text[i]
    if mark not in PAIRS:
        return False
    if mark not in ("'", "‘"):
        return True
    before_ok = i == 0 or text[i - 1] in _OPENS_AFTER
    after_ok = i + 1 < len(text) and (text[i + 1].isalnum())
    return before_ok and after_ok


def _closes_apostrophe(text: str, i: int) -> bool:
    """Whether the single quote mark at ``i`` can close a quote (after a non-space, before a
    space, punctuation or the end)."""
    before_ok = i > 0 and not text[i - 1].isspace()
    after_ok = i + 1 == len(text) or text[i + 1] in _CLOSES_BEFORE or text[i + 1] == "\n"
    return before_ok and after_ok


def _possessive(text: str, i: int) -> bool:
    """Whether the mark at ``i`` is a plural's apostrophe before a lower-case word (the one in
    "three months' base"), which closes a quote only when nothing better does."""
    return text[i] in _APOSTROPHE_LIKE and text[i - 1] == "s" and text[i + 1:i + 3].startswith(" ") \
        and text[i + 2:i + 3].islower()


def quote_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each quote in ``text``, marks included, outermost only, in order. A
    plural's apostrophe inside a quote ("three months' base") closes it only when no other
    closing mark follows in the paragraph. Only the quote marks are looked at, once each: text
    without any costs one regular-expression scan."""
    closers: dict[str, tuple[list[int], list[int]]] = {}  # mark -> (closing positions, possessive ones)
    newlines: list[int] = []
    openers: list[int] = []
    for found in _MARK_RE.finditer(text):  # only the marks are looked at, not every character
        j, char = found.start(), found.group(0)
        if char == "\n":
            newlines.append(j)
            continue
        if char in PAIRS and _opens(text, j):
            openers.append(j)
        if char in _CLOSING_MARKS and j > 0:
            strong, weak = closers.setdefault(char, ([], []))
            if char not in _APOSTROPHE_LIKE or _closes_apostrophe(text, j):
                (weak if _possessive(text, j) else strong).append(j)
    spans: list[tuple[int, int]] = []
    after = -1  # the end of the last quote: openers inside it are its text
    for i in openers:
        if i < after:
            continue
        strong, weak = closers.get(PAIRS[text[i]], ([], []))
        if not strong and not weak:
            continue  # nothing could close it
        paragraph_end = _first_after(newlines, i)
        limit = min(len(text) if paragraph_end is None else paragraph_end, i + 1 + MAX_QUOTE_CHARS)
        close = next((c for c in (_first_after(strong, i), _first_after(weak, i)) if c is not None and c < limit), None)
        if close is None:
            continue  # a stray mark
        spans.append((i, close + 1))
        after = close + 1
    return spans


def _first_after(positions: list[int], i: int) -> int | None:
    at = bisect_right(positions, i)
    return positions[at] if at < len(positions) else None


def outside_quotes(text: str) -> str:
    """``text`` without its quotes."""
    return "".join(part for part, quoted in pieces(text) if not quoted)


def pieces(text: str) -> list[tuple[str, bool]]:
    """``text`` cut into its unquoted and quoted runs, in order: (run, is_quoted)."""
    runs: list[tuple[str, bool]] = []
    last = 0
    for start, end in quote_spans(text):
        if start > last:
            runs.append((text[last:start], False))
        runs.append((text[start:end], True))
        last = end
    if last < len(text):
        runs.append((text[last:], False))
    return runs


def rewritten_outside_quotes(text: str, rewrite: Callable[[str], str]) -> str:
    """``text`` with ``rewrite`` applied to every run outside quotes; quotes as they were."""
    return "".join(run if quoted else rewrite(run) for run, quoted in pieces(text))


def close_and_reopen(text: str, parts: list[tuple[int, int]]) -> list[str]:
    """The pieces ``parts`` ((start, end) offsets) of ``text``, each a quote of its own where a
    quote runs across it: the opening mark put back in front of a piece that starts inside a
    quote, the closing one after a piece that ends inside it."""
    spans = quote_spans(text)
    starts = [q_start for q_start, _ in spans]

    def around(offset: int) -> tuple[int, int] | None:
        """The quote that begins before ``offset`` and is still open there (at most one)."""
        at = bisect_left(starts, offset) - 1
        return spans[at] if at >= 0 and offset < spans[at][1] else None

    out: list[str] = []
    for start, end in parts:
        piece = text[start:end].strip()
        if not piece:
            continue
        opened, closing = around(start), around(end)
        if opened is not None and start < opened[1] - 1:  # opened[1] - 1 is the closing mark
            piece = text[opened[0]] + piece
        if closing is not None and end <= closing[1] - 1:
            piece = piece + PAIRS[text[closing[0]]]
        out.append(piece)
    return out


#: A reply's line that offers wording to send or sign: "- Chinese (to send): …", "Demand letter,
#: English: …", "函件正文建议：…", "可以这样写：…" — a label of at most ~50 characters, a colon,
#: and the wording to the end of the line.
_PROPOSED_WORDING_RE = re.compile(
    r"^(?P<label>[ \t]*(?:[-*•][ \t]*)?[^:：\n]{0,40}?"
    r"(?:to send|draft|wording|letter|template|english|chinese|中文|英文|函|稿|范本|模板|正文|这样写|写法|措辞)"
    r"[^:：\n]{0,12}[:：][ \t]*)(?P<wording>[^\n]+)$",
    re.IGNORECASE | re.MULTILINE,
)


def proposed_wording_quoted(reply: str) -> str:
    """``reply`` with the wording it proposes put in quotes: in a draft letter "我" / "I" is the
    client who will send it, not the assistant, and the words are to be kept as proposed."""

    def quoted(match: re.Match[str]) -> str:
        wording = match.group("wording").rstrip()
        if wording[:1] in PAIRS:  # already quoted
            return match.group(0)
        return f"{match.group('label')}“{wording}”"

    return _PROPOSED_WORDING_RE.sub(quoted, reply)
