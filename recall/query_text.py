"""The texts the query encoder reads: the question, and the context it leans on, within one
token budget.

Encoding time grows with the text (measured by bench/bench_query_encoding.py). The budget keeps
every search's encoding short: ``settings.SEARCH_QUERY_MAX_TOKENS`` (48) in all. A question alone may use
all of it (a longer one keeps its head and its tail — a long question usually ends with the
ask); a question asked inside a dialogue leaves the dialogue's most recent
``settings.SEARCH_CONTEXT_MAX_TOKENS`` (16) to a second text of the same batch. The two vectors are summed,
the context's weighted by ``CONTEXT_VECTOR_WEIGHT`` (``query_texts``): the question is encoded on
its own, never diluted by a long dialogue. Keyword search is not bounded: it reads the whole
question and the whole context.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

from django.conf import settings

# The two budgets (settings.SEARCH_QUERY_MAX_TOKENS, SEARCH_CONTEXT_MAX_TOKENS) were chosen on the
# consultation dev split for the recall of the whole query within 2x the encoding time of a short
# question (docs/evaluation.md, item 4 of "What makes the product at least the raw index";
# bench/bench_query_encoding.py).

_PIECE = re.compile(
    r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
    r"|[^\s\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+|\s+"
)
HEAD_SHARE = 0.6


def _cost(piece: str) -> int:
    if piece.isspace():
        return 0
    return 1 if len(piece) == 1 and not piece.isascii() else math.ceil(len(piece) / 4)


def _pieces(text: str) -> list[tuple[str, int]]:
    return [(piece, _cost(piece)) for piece in _PIECE.findall(text)]


def _take(pieces: list[tuple[str, int]], budget: int) -> tuple[list[str], int]:
    """The leading pieces that fit ``budget`` tokens, and their cost."""
    taken, used = [], 0
    for piece, cost in pieces:
        if used + cost > budget:
            break
        taken.append(piece)
        used += cost
    return taken, used


def head_and_tail(text: str, budget: int) -> str:
    """``text`` itself when it fits ``budget`` tokens, else its head and tail joined by " … "."""
    pieces = _pieces(text)
    if sum(cost for _, cost in pieces) <= budget:
        return text.strip()
    head, used = _take(pieces, max(1, int(budget * HEAD_SHARE)))
    tail, _ = _take(pieces[::-1], budget - used - 1)  # one token for " … "
    head_text, tail_text = "".join(head).strip(), "".join(reversed(tail)).strip()
    return f"{head_text} … {tail_text}" if tail_text else head_text


def most_recent(text: str, budget: int) -> str:
    """The end of ``text`` within ``budget`` tokens (the latest part of a context)."""
    if budget <= 0 or not text:
        return ""
    tail, _ = _take(_pieces(text)[::-1], budget)
    return "".join(reversed(tail)).strip()


# The context vector's weight beside the question's (1.0). Chosen on the consultation set's dev
# split (0.3, 0.5 and 0.8 tried: the same recall, 0.3 the best MRR; docs/evaluation.md).
CONTEXT_VECTOR_WEIGHT = 0.3


@dataclass(frozen=True)
class QueryTexts:
    """What a search encodes: the bounded question and the bounded recent context ("" if none)."""

    question: str
    context: str = ""


def query_texts(question: str, context: str = "") -> QueryTexts:
    """The bounded question and, apart from it, the most recent context; together within
    ``settings.SEARCH_QUERY_MAX_TOKENS``."""
    budget = settings.SEARCH_QUERY_MAX_TOKENS
    recent = most_recent(context or "", min(settings.SEARCH_CONTEXT_MAX_TOKENS, budget // 2))
    return QueryTexts(head_and_tail(question, budget - _tokens(recent)), recent)


def _tokens(text: str) -> int:
    return sum(cost for _, cost in _pieces(text))
