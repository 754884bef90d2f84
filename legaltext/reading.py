"""``read``: everything the product asks of a text, read once.

A ``Reading`` holds, each with its character span, the amounts, plain numbers, dates,
durations, identifiers, people and companies, statute citations and contract articles,
corrections and sentences (with their acts) of one message or one document page. Read it once
and pass it along: ``read`` is cached on its arguments, so the places that ask about the same
text with the same day get the same ``Reading`` without reading again.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from functools import lru_cache

from . import acts
from .corrections import Correction, corrections
from .dates import DateMention, Duration, dates, durations
from .identifiers import IdentifierMention, identifier_mentions
from .language import detect_language
from .names import NameMention, names
from .numbers import Amount, Number, amounts, plain_numbers
from .sentences import Sentence, sentence_spans
from .statutes import ArticleMention, StatuteMention, statutes_and_articles

#: How many readings are kept (a turn's message, its items and the recalled notes).
CACHE_SIZE = 512


@dataclass(frozen=True)
class Reading:
    """What a text says, each finding with its span (``start``, ``end``) in ``text``."""

    text: str
    language: str
    said_on: date | None
    amounts: tuple[Amount, ...]
    numbers: tuple[Number, ...]
    dates: tuple[DateMention, ...]
    durations: tuple[Duration, ...]
    identifiers: tuple[IdentifierMention, ...]
    people: tuple[NameMention, ...]
    companies: tuple[NameMention, ...]
    statutes: tuple[StatuteMention, ...]
    articles: tuple[ArticleMention, ...]
    corrections: tuple[Correction, ...]
    sentences: tuple[Sentence, ...]

    @property
    def acts(self) -> tuple[str, ...]:
        """The act of each sentence, in order."""
        return tuple(sentence.act for sentence in self.sentences)

    @property
    def act(self) -> str:
        """The text's act: a correction or a question anywhere decides it, else the first
        sentence's that is not a plain statement, else "statement"."""
        for wanted in ("correction", "question"):
            if wanted in self.acts:
                return wanted
        return next((a for a in self.acts if a != "statement"), "statement")

    @property
    def contract_articles(self) -> tuple[ArticleMention, ...]:
        return tuple(article for article in self.articles if article.in_contract)

    def spans(self, *kinds: str) -> list[tuple[int, int]]:
        """The spans of the findings of ``kinds`` ("amounts", "dates", …)."""
        return [(found.start, found.end) for kind in kinds for found in getattr(self, kind)]


def _said_on(said_at: datetime | date | None) -> date | None:
    if isinstance(said_at, datetime):
        return said_at.date()
    return said_at


def read(text: str, language: str | None = None, said_at: datetime | date | None = None, *,
         in_contract: bool | None = None) -> Reading:
    """Read ``text`` (a message or a document page) said at ``said_at`` (relative dates are
    resolved against its day). ``in_contract`` says the text is a contract's (its bare
    articles are then contract terms); None lets the text's own words decide."""
    return _read(text or "", language or detect_language(text or ""), _said_on(said_at), in_contract)


@lru_cache(maxsize=CACHE_SIZE)
def _read(text: str, language: str, said_on: date | None, in_contract: bool | None) -> Reading:
    found_amounts = amounts(text)
    found_dates = dates(text, said_on)
    found_identifiers = sorted(identifier_mentions(text), key=lambda m: m.start)
    found_durations = [d for d in durations(text)
                       if not any(d.start < m.end and m.start < d.end for m in (*found_dates, *found_amounts))]
    statutes, articles = statutes_and_articles(text, in_contract)
    taken = [(m.start, m.end) for m in (*found_amounts, *found_dates, *found_identifiers, *found_durations,
                                        *statutes, *articles)]
    found_names = names(text)
    sentences = tuple(Sentence(start, end, text[start:end], acts.act_of(text[start:end]))
                      for start, end in sentence_spans(text))
    return Reading(
        text=text, language=language, said_on=said_on,
        amounts=tuple(found_amounts), numbers=tuple(plain_numbers(text, taken)), dates=tuple(found_dates),
        durations=tuple(found_durations), identifiers=tuple(found_identifiers),
        people=tuple(n for n in found_names if n.kind == "person"),
        companies=tuple(n for n in found_names if n.kind == "company"),
        statutes=tuple(statutes), articles=tuple(articles), corrections=tuple(corrections(text)),
        sentences=sentences,
    )
