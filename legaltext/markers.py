"""Source markers in an answer: "[2]", "[2][5]", "[2, 5]", and the full-width "【2】" / "［２］".

An answer cites its numbered sources (docs/citations.md) with markers at the end of a sentence.
:class:`MarkerStream` reads them as the answer streams in, chunk by chunk: a marker split
across chunks is held back until it closes (or proves not to be one), and what cannot be a
marker comes out as text at once. It never raises on what a model writes: a bracket never
closed is text when the stream ends, a bracket that runs longer than any marker is text,
brackets in code (inline or fenced) and inside a URL are text. Pure: it knows nothing of which
numbers exist — the caller decides what a number points to.
"""
from __future__ import annotations

from dataclasses import dataclass

#: Opening bracket → its closing bracket.
BRACKETS = {"[": "]", "【": "】", "［": "］"}
#: The longest marker read ("[12, 13, 14, 15]" and a little more); longer is text.
MAX_MARKER_CHARS = 24
#: The largest source number read (an answer never has this many sources).
MAX_NUMBER = 9999
_FULL_WIDTH_DIGITS = str.maketrans("０１２３４５６７８９", "0123456789")
_SEPARATORS = ",，、 "
_DIGITS = "0123456789０１２３４５６７８９"
#: What ends a word for the URL test (a URL runs to the next space or Chinese punctuation).
_WORD_BREAKS = " \t\r\n\f。，、；：！？（）《》「」“”‘’"
_URL_STARTS = ("http://", "https://", "www.", "ftp://")


@dataclass(frozen=True)
class Marker:
    """One marker as written (``raw``) and the source numbers it names, in order."""

    numbers: tuple[int, ...]
    raw: str


Piece = str | Marker


def marker_numbers(inner: str) -> tuple[int, ...] | None:
    """The numbers of a marker's inside ("2", "2, 5", "２、５"), or None when it is not one."""
    parts = [part for part in inner.translate(_FULL_WIDTH_DIGITS).replace("，", ",").replace("、", ",")
             .replace(" ", ",").split(",") if part]
    if not parts or not all(part.isdigit() and len(part) <= 4 for part in parts):
        return None
    numbers = tuple(int(part) for part in parts)
    return numbers if all(0 < n <= MAX_NUMBER for n in numbers) else None


class MarkerStream:
    """Feed an answer's chunks; get back text and :class:`Marker` pieces in order.

    ``feed`` returns what is certain so far; ``close`` returns what was held back (a marker
    never closed comes back as the text it was)."""

    def __init__(self) -> None:
        self._held = ""  # an opening bracket and what followed it, not yet decided
        self._ticks = 0  # backticks in a row just read
        self._in_fence = False
        self._in_inline = False
        self._word = ""  # the last word of text (for the URL test), at most 16 characters
        self._url = False  # the current word is a URL

    def feed(self, chunk: str) -> list[Piece]:
        out: list[Piece] = []
        for char in chunk or "":
            self._read(char, out)
        return _merged(out)

    def close(self) -> list[Piece]:
        out: list[Piece] = []
        if self._held:
            self._text(self._held, out)
            self._held = ""
        return _merged(out)

    # --- one character ---------------------------------------------------------------

    def _read(self, char: str, out: list[Piece]) -> None:
        if self._held:
            opener = self._held[0]
            if char == BRACKETS[opener]:
                raw = self._held + char
                self._held = ""
                numbers = marker_numbers(raw[1:-1])
                if numbers is None:
                    self._text(raw, out)
                else:
                    out.append(Marker(numbers, raw))
                return
            if (char in _DIGITS or char in _SEPARATORS) and len(self._held) < MAX_MARKER_CHARS:
                self._held += char
                return
            held, self._held = self._held, ""
            self._text(held, out)  # not a marker: what was held is text, and this char is read anew
        if char != "`":
            self._settle_ticks()
        if char in BRACKETS and not self._in_code() and not self._url:
            self._held = char
            return
        self._text(char, out)

    def _text(self, text: str, out: list[Piece]) -> None:
        for char in text:
            self._code_state(char)
            if char in _WORD_BREAKS:
                self._word, self._url = "", False
            else:
                self._word = (self._word + char)[-16:]
                self._url = self._url or "://" in self._word or self._word.lower().startswith(_URL_STARTS)
        out.append(text)

    def _code_state(self, char: str) -> None:
        if char == "`":
            self._ticks += 1
            return
        self._settle_ticks()
        if char == "\n":
            self._in_inline = False  # an inline code span never closed ends with its line

    def _settle_ticks(self) -> None:
        """A run of backticks just ended: three or more open or close a fence, fewer a span."""
        if self._ticks >= 3:
            self._in_fence = not self._in_fence
        elif self._ticks and not self._in_fence:
            self._in_inline = not self._in_inline
        self._ticks = 0

    def _in_code(self) -> bool:
        return self._in_fence or self._in_inline


def _merged(pieces: list[Piece]) -> list[Piece]:
    """Adjacent text pieces joined into one."""
    merged: list[Piece] = []
    for piece in pieces:
        if isinstance(piece, str) and merged and isinstance(merged[-1], str):
            merged[-1] += piece
        elif piece != "":
            merged.append(piece)
    return merged


def split_markers(text: str) -> list[Piece]:
    """A whole text as pieces (the same reading as streaming it)."""
    stream = MarkerStream()
    return _merged(stream.feed(text) + stream.close())


def strip_markers(text: str) -> str:
    """``text`` without its markers."""
    return "".join(piece for piece in split_markers(text) if isinstance(piece, str))
