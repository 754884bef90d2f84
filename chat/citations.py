"""Numbered sources and the check of every marker (docs/citations.md).

The items recalled for an answer are numbered 1…n in the order they are shown (notes and
recalled turns, then document passages); only those are ever numbered, and they were read under
the user's visibility rule, so a marker can point to nothing walled — by construction. As the
answer streams, a marker to a number outside the list is dropped at once (``CitedStream``).
When the answer is complete, ``check_answer`` reads it sentence by sentence: a marker whose item
does not support its sentence (``chat.support``) is removed and the sentence marked; a sentence
stating a sum, a day, a name or an identifier with no valid marker is marked as not found in
memory; a statute cited that no recalled item (nor the question) holds is marked unverified.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from django.utils.translation import gettext as _

from infra import metrics
from legaltext import read
from legaltext.markers import Marker, MarkerStream, split_markers
from legaltext.sentences import sentence_spans

from recall import source_url

from chat.support import bears_on, key_values, restates, statute_found, supports
from legaltext.acts import tells

#: At most this many markers are kept on one sentence (a model that repeats markers by the
#: thousand gets its sentence cited by the first few).
MAX_MARKERS_PER_SENTENCE = 4
_FENCE_RE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_CLOSING = frozenset("。．.!?！？，,;；:：)）")

# What a sentence is marked with (stored in ``Message.citations`` and the audit entry).
NOT_FOUND = "not_found"
MARKER_REMOVED = "marker_removed"
UNVERIFIED_CITATION = "unverified_citation"


def mark_label(mark: str, statute: str = "", *, still_cited: bool = False) -> str:
    """The words a marked sentence carries, in the lawyer's language (``still_cited``: another
    of its markers stands)."""
    if mark == NOT_FOUND:
        return _("（记忆中未找到依据）")
    if mark == MARKER_REMOVED:
        return _("（已删除一处无效引用）") if still_cited else _("（引用已删除：所引记忆不支持此句）")
    return _("（未核实的法条引用：%(statute)s）") % {"statute": statute}


# --- numbering ----------------------------------------------------------------------------

def number_sources(recalled: list[dict[str, Any]], *, question: str = "") -> list[dict[str, Any]]:
    """``recalled`` with each item's ``number`` (1…n, in order) and ``source_url``; with the
    ``question``, ``weak`` too: the item does not bear on it (``chat.support.bears_on``) — the
    panel keeps it, marked, rather than presenting it as the answer's basis."""
    return [{**item, "number": n, "source_url": source_url(item),
             **({"weak": not bears_on(question, source_text(item))} if question else {})}
            for n, item in enumerate(recalled, start=1)]


def source_text(item: dict[str, Any]) -> str:
    """What an item says, as the support check reads it (a turn: both its messages)."""
    partner = item.get("partner") if isinstance(item.get("partner"), dict) else {}
    return "\n".join(part for part in (str(item.get("content") or ""), str(partner.get("content") or "")) if part)


# --- while the answer streams ---------------------------------------------------------------

class ShownMarkers:
    """What the page is sent while the answer streams: the model's text with every marker read —
    one to a number 1…``count`` shown as "[n]", one to anything else left out (the finished
    answer's check marks its sentence). A bracket never closed comes out as text at the end.
    Never raises on what the model writes."""

    def __init__(self, count: int) -> None:
        self.count = count
        self._stream = MarkerStream()

    def feed(self, token: str) -> str:
        return _rendered(self._stream.feed(token), self.count)

    def close(self) -> str:
        return _rendered(self._stream.close(), self.count)


def _rendered(pieces: list[str | Marker], count: int) -> str:
    out = []
    for piece in pieces:
        if isinstance(piece, Marker):
            out.extend(f"[{n}]" for n in piece.numbers if n <= count)
        else:
            out.append(piece)
    return "".join(out)


# --- when the answer is complete ------------------------------------------------------------

@dataclass
class CheckedSentence:
    text: str
    cited: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)
    marks: list[str] = field(default_factory=list)
    statutes: list[str] = field(default_factory=list)  # unverified citations, as written
    rules: dict[str, str] = field(default_factory=dict)  # number → the support rule that decided


@dataclass
class CheckedAnswer:
    """The answer as saved (markers kept or removed, marks added) and what was found."""

    text: str
    sentences: list[CheckedSentence]
    labels: list[str]
    nothing_in_memory: bool = False  # said at the answer: no recalled item supports it

    @property
    def cited(self) -> list[int]:
        return sorted({n for s in self.sentences for n in s.cited})

    @property
    def marked(self) -> list[CheckedSentence]:
        return [s for s in self.sentences if s.marks]

    @property
    def unverified_citations(self) -> list[str]:
        return [statute for s in self.sentences for statute in s.statutes]

    def as_dict(self, sources: list[dict[str, Any]]) -> dict[str, Any]:
        """What ``Message.citations`` and the audit entry keep."""
        by_number = {item["number"]: item for item in sources}
        return {
            "cited": [{"number": n, "id": str(by_number[n].get("id", "")), "kind": by_number[n].get("kind", "note"),
                       "url": by_number[n].get("source_url", "")} for n in self.cited],
            "marked": [{"sentence": s.text, "marks": s.marks, "removed": s.removed, "statutes": s.statutes}
                       for s in self.marked],
            "unverified_citations": self.unverified_citations,
            "nothing_in_memory": self.nothing_in_memory,
            "labels": sorted(set(self.labels)),
        }


def _code_spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _FENCE_RE.finditer(text)]


def check_answer(answer: str, sources: list[dict[str, Any]], *, question: str = "",
                 by_construction: bool = False) -> CheckedAnswer:
    """Check every marker and sentence of ``answer`` against the numbered ``sources``.

    ``by_construction``: an answer the offline engine composed — its markers were written next
    to the items they name, so they are only kept in range and no sentence is marked."""
    pieces = split_markers(answer)
    plain, at = "", []  # the text without markers; (offset in plain, marker)
    for index, piece in enumerate(pieces):
        if isinstance(piece, Marker):
            after = pieces[index + 1] if index + 1 < len(pieces) else ""
            if isinstance(after, str) and after[:1] in _CLOSING and not by_construction:
                plain = plain.rstrip(" \t")  # "RMB 8000 [5]." reads "RMB 8000.[5]" once its marker moves
            at.append((len(plain), piece))
        else:
            plain += piece
    if by_construction:  # kept as composed: every marker stands next to the item it names
        cited = sorted({n for _offset, marker in at for n in marker.numbers if 0 < n <= len(sources)})
        return CheckedAnswer(answer, [CheckedSentence(plain, cited=cited)], [])
    spans = sentence_spans(plain)
    if not spans:
        return CheckedAnswer(plain, [], [])
    attached: dict[int, list[int]] = {}
    starts = [start for start, _end in spans]
    for offset, marker in at:  # a marker belongs to the last sentence that starts before it
        attached.setdefault(max(bisect_left(starts, offset) - 1, 0), []).extend(marker.numbers)
    texts = {item["number"]: source_text(item) for item in sources}
    statute_texts = list(texts.values()) + [question]
    code = _code_spans(plain)
    sentences: list[CheckedSentence] = []
    labels: list[str] = []
    out, previous_end = [], 0
    for index, (start, end) in enumerate(spans):
        sentence = CheckedSentence(plain[start:end])
        numbers = list(dict.fromkeys(attached.get(index, [])))
        if any(a < end and start < b for a, b in code):
            sentences.append(sentence)  # code is quoted, never checked
        else:
            _check(sentence, numbers, texts, statute_texts, question)
            sentences.append(sentence)
        suffix = "".join(f"[{n}]" for n in sentence.cited)
        for mark in sentence.marks:
            if mark == UNVERIFIED_CITATION:
                for statute in sentence.statutes:
                    labels.append(mark_label(mark, statute))
                    suffix += labels[-1]
            else:
                labels.append(mark_label(mark, still_cited=bool(sentence.cited)))
                suffix += labels[-1]
        out.append(plain[previous_end:end] + suffix)
        previous_end = end
    out.append(plain[previous_end:])
    return CheckedAnswer("".join(out), sentences, labels)


#: How a model already says memory holds nothing (the prompt asks it to say so first).
SAID_NOTHING = ("记忆中没有", "没有这方面的记录", "没有相关记录", "没有相关内容", "holds nothing", "no record")


def nothing_held_label() -> str:
    return _("【记忆中没有这方面的记录】以下内容并非来自本所记忆，仅供参考：")


def say_when_nothing_supports(checked: CheckedAnswer, sources: list[dict[str, Any]], question: str) -> CheckedAnswer:
    """A complete answer that cites nothing, to a question no recalled item bears on
    (``chat.support.bears_on``), starts by saying that memory holds nothing on it and that what
    follows is not from memory — unless the model said so itself, or the user was telling, not
    asking (``legaltext.acts.tells``)."""
    if checked.cited or tells(question) or any(bears_on(question, source_text(item)) for item in sources):
        return checked
    checked.nothing_in_memory = True
    if any(words in checked.text[:80].lower() for words in SAID_NOTHING):
        return checked
    label = nothing_held_label()
    checked.labels.append(label)
    checked.text = label + "\n" + checked.text
    return checked


def _check(sentence: CheckedSentence, numbers: list[int], texts: dict[int, str], statute_texts: list[str],
           question: str) -> None:
    for n in numbers:
        if n not in texts:
            sentence.removed.append(n)
            continue
        ok, rule = supports(sentence.text, texts[n])
        sentence.rules[str(n)] = rule
        (sentence.cited if ok else sentence.removed).append(n)
    del sentence.cited[MAX_MARKERS_PER_SENTENCE:]
    if sentence.removed:
        sentence.marks.append(MARKER_REMOVED)
    elif (not sentence.cited and key_values(sentence.text).states_a_fact
          and not (question and restates(sentence.text, question))):  # what the user just said is no invention
        sentence.marks.append(NOT_FOUND)
    for statute in read(sentence.text).statutes:
        if not statute_found(statute.law, statute.article, statute_texts):
            sentence.statutes.append(statute.text)
    if sentence.statutes:
        sentence.marks.append(UNVERIFIED_CITATION)


def count_marks(checked: CheckedAnswer) -> None:
    """The check's findings in the metrics (``legalmem_answer_*``)."""
    for sentence in checked.marked:
        for mark in sentence.marks:
            metrics.ANSWER_MARKS.labels(mark).inc()
    if checked.unverified_citations:
        metrics.ANSWER_UNVERIFIED_CITATIONS.inc(len(checked.unverified_citations))
