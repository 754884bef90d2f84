"""A contract's article is one note (issue 50: "clauses and articles kept whole").

The engine reads a document sentence by sentence, so "第六条 …维修由甲方负责；因乙方使用不当造成
损坏的，由乙方负责维修或者赔偿。" became two notes and the first read as if the landlord repaired
everything: the readers of the note-truth set judged such notes cut. The items an article's
sentences gave are put back together as the article's whole text, once.
"""
from __future__ import annotations

import re
from dataclasses import replace

from legaltext.documents import article_spans
from remember.extraction.items import ExtractedItem

#: Longer articles stay as their sentences' notes (a note is read at a glance).
MAX_ARTICLE_CHARS = 500
_NOT_WORDS_RE = re.compile(r"[^\w]|_")
#: Words the engine puts before a document's sentence ("当事人…", "用户…", the page as its speaker:
#: "《Residential Tenancy Agreement》第 2 页 said …").
_LEAD_RE = re.compile(r"^(?:《[^》]+》第 \d+ 页(?: said |说：)|当事人|用户)")


def _core(text: str) -> str:
    return _NOT_WORDS_RE.sub("", text)


def whole_articles(items: list[ExtractedItem], text: str) -> list[ExtractedItem]:
    """``items`` with those read from one article of ``text`` replaced by one item holding the
    article whole (in the place of the first); items found in no article are left as they are."""
    articles = [(start, end) for start, end in article_spans(text) if end - start <= MAX_ARTICLE_CHARS]
    cores = [_core(text[start:end]) for start, end in articles]
    merged: list[ExtractedItem] = []
    taken: dict[int, int] = {}  # article → index in merged
    for item in items:
        said = _core(_LEAD_RE.sub("", item.content))
        found = next((index for index, core in enumerate(cores) if said and said in core), None)
        if found is None:
            merged.append(item)
            continue
        if found in taken:
            first = merged[taken[found]]
            merged[taken[found]] = replace(first, dates=list(dict.fromkeys([*first.dates, *item.dates])),
                                           amounts=list(dict.fromkeys([*first.amounts, *item.amounts])),
                                           importance=max(first.importance, item.importance))
            continue
        start, end = articles[found]
        taken[found] = len(merged)
        merged.append(replace(item, content=_one_line(text[start:end])))
    return merged


#: Chinese text and punctuation: lines joined without a space.
_CJK_EDGE_RE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _one_line(article: str) -> str:
    """The article's lines as one: Chinese ones joined as written, others with a space."""
    joined = ""
    for line in (part.strip() for part in article.splitlines() if part.strip()):
        glue = "" if not joined or _CJK_EDGE_RE.match(line) or _CJK_EDGE_RE.match(joined[-1]) else " "
        joined += glue + line
    return joined
