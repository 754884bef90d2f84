"""What a reply adds: its sentences minus those that only quote what was recalled for it.

A chat answer repeats the memories it was given (the LLM paraphrases a recalled fact, the offline
engine lists them). Extracted again, such a sentence would count a fact's mentions twice, copy a
statute into a new matter, and file the assistant's echo as new knowledge. A sentence is a quote
when most of its character pairs (``QUOTE_CONTAINMENT``) appear in one recalled text; the
sentences left are the reply's own: advice, a computed deadline, a statute not recalled.
"""
from __future__ import annotations

import re
from collections.abc import Iterable

from .offline.text import split_clauses, split_sentences

#: Share of a sentence's character pairs found in one recalled text that makes it a quote. A
#: paraphrase that keeps the facts keeps most pairs (names, numbers, legal terms); a sentence
#: that adds a sum or a deadline of its own brings pairs no recalled text holds.
QUOTE_CONTAINMENT = 0.8
#: Sentences shorter than this (in pairs) are judged with the rest of the reply, not alone.
MIN_PAIRS = 4
_NOISE = re.compile(r"[\s\W_]+", re.UNICODE)
#: Words that only say where a quote comes from ("您之前提到，…", "As you mentioned, …").
_ATTRIBUTION = re.compile(
    r"^(?:正如|如|据|根据)?(?:您|你|客户|当事人)?(?:之前|此前|前面|上次|刚才)?(?:提到|说过|说|所说|提供的信息|告诉我)(?:的)?"
    r"$|^(?:根据|依据)?(?:记录|记忆|已有记录|已知信息|前述|如前所述)(?:中|显示)?$"
    r"|^(?:as )?(?:you|the client) (?:mentioned|said|told us)(?: earlier| before)?$|^as noted(?: earlier)?$",
    re.IGNORECASE,
)


def _pairs(text: str) -> set[str]:
    folded = _NOISE.sub("", text.lower())
    return {folded[i : i + 2] for i in range(len(folded) - 1)}


def _clause_is_quote(clause: str, recalled: list[set[str]]) -> bool | None:
    """True: it repeats a recalled text; False: it says something of its own; None: too short
    to tell, or only an attribution ("您之前提到")."""
    pairs = _pairs(clause)
    if len(pairs) < MIN_PAIRS or _ATTRIBUTION.match(_NOISE.sub(" ", clause).strip()):
        return None
    return any(len(pairs & other) >= QUOTE_CONTAINMENT * len(pairs) for other in recalled)


def is_quote(sentence: str, recalled: list[set[str]]) -> bool:
    """Whether ``sentence`` only repeats the ``recalled`` texts (as character pairs): judged
    whole, then clause by clause — quoted clauses and attributions, nothing of its own."""
    whole = _clause_is_quote(sentence, recalled)
    if whole is not False:
        return bool(whole)
    verdicts = [_clause_is_quote(clause, recalled) for clause in split_clauses(sentence)]
    return True in verdicts and False not in verdicts


def new_in_reply(reply: str, recalled_texts: Iterable[str]) -> str:
    """``reply`` without the sentences that quote a recalled text (order and line breaks kept)."""
    recalled = [pairs for pairs in (_pairs(text) for text in recalled_texts if text) if pairs]
    if not recalled or not reply:
        return reply
    kept_lines = []
    for line in reply.splitlines():
        kept = [sentence for sentence in split_sentences(line) if not is_quote(sentence, recalled)]
        if kept:
            kept_lines.append(_joined(kept))
    return "\n".join(kept_lines)


def _joined(sentences: list[str]) -> str:
    """Sentences back into one line: a space where either side is Latin text, none in Chinese."""
    line = ""
    for sentence in sentences:
        gap = " " if line and (line[-1].isascii() or sentence[0].isascii()) else ""
        line += gap + sentence
    return line
