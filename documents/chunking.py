"""Cutting a page's text into passages that respect paragraphs and headings.

A chunk is ``page_text[start:end]``: whole paragraphs (blank-line or line-per-paragraph text),
never across a heading (a heading opens a chunk and is remembered as its ``heading``), at most
CHUNK_MAX_CHARS; a longer paragraph is cut at sentence ends.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

CHUNK_MAX_CHARS = 700   # ~ a clause or two: e5-small reads 512 tokens, a Chinese character is ~1
CHUNK_MIN_CHARS = 80    # a shorter paragraph joins the next one (under the same heading)

_HEADING = re.compile(
    r"^\s*(#{1,6}\s+\S.*"                                      # Markdown (and DOCX headings)
    r"|第[一二三四五六七八九十百千零〇\d]+[条章节款部分編编]\S{0,40}.*"   # 第三条 租金
    r"|(Article|Section|Clause|ARTICLE|SECTION|CLAUSE)\s+\d+[\w.]*\b.{0,60}"
    r"|[一二三四五六七八九十]+、.{1,40}"
    r"|\d+(\.\d+)*[.、]?\s+\S.{0,50})\s*$"
)
_SENTENCE_END = re.compile(r"(?<=[。！？；!?;])|(?<=[.])\s")


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    heading: str


#: A line that opens an article or clause of its own ("第九条 …", "Clause 7 …").
_ARTICLE_OPENING = re.compile(r"^\s*(?:第[一二三四五六七八九十百千零〇\d]+条|(?:Article|Clause|ARTICLE|CLAUSE)\s+\d+)")


def opens_an_article(line: str) -> bool:
    """Whether ``line`` opens an article or clause (its own heading, ending with 。 or not)."""
    return bool(_ARTICLE_OPENING.match(line))


def is_heading(line: str) -> bool:
    stripped = line.strip()
    return 0 < len(stripped) <= 80 and bool(_HEADING.match(stripped)) and not stripped.endswith(("。", "；", ","))


def paragraphs(text: str) -> list[tuple[int, int, bool]]:
    """(start, end, is_heading) of each paragraph: runs of non-blank lines; a heading line is a
    paragraph of its own."""
    found: list[tuple[int, int, bool]] = []
    start = None
    position = 0
    for line in text.splitlines(keepends=True):
        line_start, line_end = position, position + len(line.rstrip("\n"))
        position += len(line)
        if not line.strip():
            if start is not None:
                found.append((start, previous_end, False))
                start = None
            continue
        if is_heading(line):
            if start is not None:
                found.append((start, previous_end, False))
                start = None
            found.append((line_start, line_end, True))
            continue
        if start is None:
            start = line_start
        previous_end = line_end
    if start is not None:
        found.append((start, previous_end, False))
    return found


def _cut_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """A paragraph longer than CHUNK_MAX_CHARS, cut at sentence ends (hard cuts as a last resort)."""
    pieces: list[tuple[int, int]] = []
    piece_start = start
    cuts = [start + m.start() for m in _SENTENCE_END.finditer(text[start:end])] + [end]
    last = start
    for cut in cuts:
        if cut - piece_start > CHUNK_MAX_CHARS and last > piece_start:
            pieces.append((piece_start, last))
            piece_start = last
        last = cut
    while end - piece_start > CHUNK_MAX_CHARS:
        pieces.append((piece_start, piece_start + CHUNK_MAX_CHARS))
        piece_start += CHUNK_MAX_CHARS
    if end > piece_start:
        pieces.append((piece_start, end))
    return pieces


def chunk_page(text: str, heading: str = "") -> tuple[list[Span], str]:
    """The page's chunks, and the heading in force at its end (it carries to the next page)."""
    spans: list[Span] = []
    current: tuple[int, int] | None = None

    def flush() -> None:
        nonlocal current
        if current is not None:
            # an article carried from the page before heads the first chunk whole, the others by
            # its opening line
            spans.append(Span(current[0], current[1], heading if not spans else heading.split("\n", 1)[0]))
            current = None

    for start, end, heading_line in paragraphs(text):
        if heading_line:
            flush()
            heading = text[start:end].strip().lstrip("#").strip()
            current = (start, end)
            continue
        if end - start > CHUNK_MAX_CHARS:
            flush()
            for piece in _cut_long(text, start, end):
                spans.append(Span(piece[0], piece[1], heading))
            continue
        if current is not None and end - current[0] > CHUNK_MAX_CHARS:
            flush()
        current = (current[0], end) if current is not None else (start, end)
        if end - current[0] >= CHUNK_MIN_CHARS:
            flush()
    flush()
    return [span for span in spans if text[span.start:span.end].strip()], unfinished_article(text) or heading


#: Where a sentence may end a page: past it, the sentence goes on overleaf.
_PAGE_END_RE = re.compile(r"[。；！？.!?;：:）)」”\"]\s*$")
#: The longest unfinished article carried to the next page (``DocumentChunk.heading`` holds 300).
MAX_CARRIED_CHARS = 300


def unfinished_article(text: str) -> str:
    """The article the page ends inside of, from its opening line ("第五条 乙方应于…租赁期满或\n合同
    解除后，…交还房屋的，"), when the page stops mid-sentence: it heads the next page's first
    chunk, so that the article is read whole there ("…甲方应当于…无息退还全部押金。"). "" when
    the page ends a sentence, or no article opens on it, or the article is too long to carry."""
    stripped = text.rstrip()
    if not stripped or _PAGE_END_RE.search(stripped):
        return ""
    lines = stripped.splitlines()
    for index in range(len(lines) - 1, -1, -1):
        if opens_an_article(lines[index]):
            carried = "\n".join(line.strip() for line in lines[index:] if line.strip())
            return carried if len(carried) <= MAX_CARRIED_CHARS else ""
        if not lines[index].strip():
            return ""  # a blank line: the page's last paragraph is no article
    return ""
