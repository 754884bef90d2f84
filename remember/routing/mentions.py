"""What a statement names, read from its text: dates, amounts and other quantities,
identifiers, ordinals, people and statute references (Chinese and English).

Routing needs them to tell one corrected fact from two distinct events that read alike:
"第一期租金3500元" and "第二期租金3500元" differ only in an ordinal, transfers TX…0000
and TX…0001 only in an id — and a sentence embedding scores both pairs ≈ 1.0. Each
mention is normalised (``2万元`` → money 20000, ``March 5, 2024`` → 2024-03-05) so the
two sides compare by value, and its span is cut out of the text so what remains can be
compared word by word.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from legaltext.dates_en import MONTHS_WRITTEN
from legaltext.identifiers import identifier_mentions
from legaltext.names import (
    EN_LEADING_NAME_RE as _EN_LEADING_NAME, EN_NAME_RE as _EN_NAME, common_surnames, leading_name_re,
    may_be_english_name, role_name_re, titled_name_re,
)
from legaltext.numbers import small_number
from legaltext.values import values
from remember.extraction import extract_law_refs
from remember.extraction.lexicon import person_names

_MONTHS = MONTHS_WRITTEN
_MONTH = "(?:" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_EN_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "eleventh": 11, "twelfth": 12, "final": 99, "last": 99,
}

# Identifiers: letters and digits together (TX20260301000, INV-0412, 2024-CV-1234), long digit
# runs that are not amounts (invoice 04411200), Chinese case numbers ((2024)京0105民初1234号).
_ALNUM_ID = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z0-9_-]*[A-Za-z])(?=(?:[A-Za-z_-]*\d){3})[A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*")
_DIGIT_ID = re.compile(r"(?<![\dA-Za-z$.,，])\d{6,}(?![\d.,]|\s*(?:元|万|块|%|％|dollars|usd|yuan|rmb))", re.IGNORECASE)
_ORDINAL_SUFFIX = re.compile(r"^\d+(?:st|nd|rd|th)$", re.IGNORECASE)

_ZH_DATE = re.compile(r"(?:(\d{4})年)?(\d{1,2})月(?:(\d{1,2})[日号])?")
_ZH_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})年(?:度)?")
_EN_YEAR = re.compile(r"\b(?:in|since|of|during|from|until|by)\s+((?:19|20)\d{2})\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)")
_EN_DATE_MDY = re.compile(r"\b(" + _MONTH + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b(?:,?\s+(\d{4}))?")
_EN_DATE_DMY = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)?\s+(" + _MONTH + r")(?:,?\s+(\d{4}))?")
_EN_MONTH = re.compile(r"\b(" + _MONTH + r")(?:\s+(\d{4}))?\b")

_MONEY_UNITS = {"万元": 10000.0, "万": 10000.0, "千元": 1000.0, "元": 1.0, "块": 1.0, "块钱": 1.0}
_QUANTITY_UNITS = {
    "%": "percent", "％": "percent", "percent": "percent", "平方米": "area", "平米": "area",
    "square meters": "area", "square metres": "area", "sq m": "area", "个月": "months", "months": "months",
    "month": "months", "小时": "hours", "hours": "hours", "hour": "hours", "天": "days", "days": "days",
    "day": "days", "年": "years", "years": "years", "year": "years", "次": "times", "times": "times",
}
_NUMBER = r"\d+(?:,\d{3})*(?:\.\d+)?"
_ZH_QUANTITY = re.compile(
    r"(" + _NUMBER + r")\s*(万元|千元|块钱|万|元|块|%|％|平方米|平米|个月|小时|天|年|次)"
)
_DOLLARS = re.compile(r"(?:\$|USD\s?|US\$|RMB\s?|¥|￥)\s?(" + _NUMBER + r")\s*(k|m|million|thousand)?\b", re.IGNORECASE)
_EN_QUANTITY = re.compile(
    r"\b(" + _NUMBER + r")\s*(dollars|usd|yuan|rmb|percent|%|square met(?:er|re)s|sq m|months?|hours?|days?|years?|times)(?![A-Za-z])",
    re.IGNORECASE,
)

_ZH_ORDINAL = re.compile(r"第\s*([0-9一二两三四五六七八九十]+)\s*(期|笔|次|批|阶段|轮|个月|年|周|天|名|份)")
_ZH_INSTANCE = re.compile(r"(一|二|再)审")
_EN_ORDINAL_WORD = re.compile(r"\b(" + "|".join(_EN_ORDINALS) + r"|\d+(?:st|nd|rd|th))\b", re.IGNORECASE)
_EN_NUMBERED = re.compile(
    r"\b(instal(?:l)?ment|payment|tranche|phase|round|no\.|number|#)\s*(\d+)\b", re.IGNORECASE
)

_EN_LAW = re.compile(r"\b(?:Section|Article|Art\.|§)\s*(\d+[a-z]?)", re.IGNORECASE)
#: The 100 commonest surnames: routing compares names between notes, where a rarer surname
#: finds more common words than names.
_ZH_SURNAMES = common_surnames(100)
_ZH_TITLED = titled_name_re(_ZH_SURNAMES)
_ZH_ROLE_NAME = role_name_re(_ZH_SURNAMES)
_ZH_LEADING_NAME = leading_name_re(_ZH_SURNAMES)


@dataclass
class Mentions:
    """Normalised mentions of one text, and the text with their spans blanked out."""

    dates: set[str] = field(default_factory=set)
    quantities: set[tuple[str, float]] = field(default_factory=set)  # (unit, value)
    ids: set[str] = field(default_factory=set)
    ordinals: set[str] = field(default_factory=set)
    people: set[str] = field(default_factory=set)
    law_refs: set[str] = field(default_factory=set)
    rest: str = ""


def _blank(text: str, span: tuple[int, int], mark: str = " ") -> str:
    start, end = span
    return text[:start] + mark * (end - start) + text[end:]


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _date(year: str | None, month: str | int | None, day: str | None) -> str:
    """``YYYY-MM-DD`` with ``?`` for a part that was not said."""
    m = int(month) if month else None
    return f"{year or '?'}-{m:02d}-{int(day):02d}" if (m and day) else f"{year or '?'}-{m:02d}-?" if m else "?"


def dates_compatible(a: str, b: str) -> bool:
    """Two normalised dates can name the same day: every part said on both sides agrees."""
    return all(x == y or "?" in (x, y) for x, y in zip(a.split("-"), b.split("-")))


def read_mentions(text: str) -> Mentions:
    """All mentions of ``text``; ids first (an id may contain a year), then dates, then amounts."""
    found = Mentions()
    rest = text
    for case in identifier_mentions(rest, with_account_tails=False):
        if case.kind == "case_number":
            found.ids.add(case.value)
            rest = _blank(rest, (case.start, case.end), "#")
    for match in _ALNUM_ID.finditer(rest):
        if _ORDINAL_SUFFIX.match(match.group(0)):
            continue
        found.ids.add(match.group(0).upper())
        rest = _blank(rest, match.span(), "#")
    for ref in extract_law_refs(rest):
        found.law_refs.add(ref)
        rest = rest.replace(ref, "§" * len(ref))
    for match in _EN_LAW.finditer(rest):
        found.law_refs.add(f"section {match.group(1).lower()}")
        rest = _blank(rest, match.span(), "§")
    for pattern, parts in (
        (_ISO_DATE, lambda m: (m.group(1), m.group(2), m.group(3))),
        (_ZH_DATE, lambda m: (m.group(1), m.group(2), m.group(3))),
        (_EN_DATE_MDY, lambda m: (m.group(3), _MONTHS[m.group(1).rstrip(".")], m.group(2))),
        (_EN_DATE_DMY, lambda m: (m.group(3), _MONTHS[m.group(2).rstrip(".")], m.group(1))),
        (_EN_MONTH, lambda m: (m.group(2), _MONTHS[m.group(1).rstrip(".")], None)),
    ):
        for match in pattern.finditer(rest):
            year, month, day = parts(match)
            if month and 1 <= int(month) <= 12:
                found.dates.add(_date(year, month, day))
                rest = _blank(rest, match.span(), "@")
    for pattern in (_ZH_YEAR, _EN_YEAR):  # a year alone ("2024年", "in 2024") is a date too
        for match in pattern.finditer(rest):
            found.dates.add(f"{match.group(1)}-?-?")
            rest = _blank(rest, match.span(), "@")
    for match in _DIGIT_ID.finditer(rest):
        found.ids.add(match.group(0))
        rest = _blank(rest, match.span(), "#")
    for match in _DOLLARS.finditer(rest):
        scale = {"k": 1e3, "thousand": 1e3, "m": 1e6, "million": 1e6}.get((match.group(2) or "").lower(), 1.0)
        found.quantities.add(("money", _number(match.group(1)) * scale))
        rest = _blank(rest, match.span(), "$")
    for pattern in (_ZH_QUANTITY, _EN_QUANTITY):
        for match in pattern.finditer(rest):
            unit = match.group(2).lower()
            if unit in _MONEY_UNITS or unit in ("dollars", "usd", "yuan", "rmb"):
                found.quantities.add(("money", _number(match.group(1)) * _MONEY_UNITS.get(unit, 1.0)))
            else:
                found.quantities.add((_QUANTITY_UNITS.get(unit, unit), _number(match.group(1))))
            rest = _blank(rest, match.span(), "$")
    for match in _ZH_ORDINAL.finditer(rest):
        number = small_number(match.group(1))
        if number is not None:
            found.ordinals.add(f"{match.group(2)}:{number}")
            rest = _blank(rest, match.span(), "^")
    for match in _ZH_INSTANCE.finditer(rest):
        found.ordinals.add(f"审:{ {'一': 1, '二': 2, '再': 3}[match.group(1)] }")
        rest = _blank(rest, match.span(), "^")
    for match in _EN_NUMBERED.finditer(rest):
        found.ordinals.add(f"#{int(match.group(2))}")
        rest = _blank(rest, (match.start(2), match.end(2)), "^")
    for match in _EN_ORDINAL_WORD.finditer(rest):
        word = match.group(1).lower()
        number = _EN_ORDINALS.get(word) or int(re.sub(r"\D", "", word))
        found.ordinals.add(f"#{number}")
        rest = _blank(rest, match.span(), "^")
    for rate in (v for v in values(text) if v.kind == "percent" and "分之" in v.text):
        rest = _blank(rest, (rate.start, rate.end), "%")  # "万分之五" names no 万 (a surname)
    found.people = _people(rest)
    for name in sorted(found.people, key=len, reverse=True):
        rest = rest.replace(name, "&" * len(name))
    found.rest = rest
    return found


def _people(text: str) -> set[str]:
    """Named people: 张先生 / 王某, a surname-led name after a role word (证人王强) or opening the
    sentence (张伟向…), a name jieba tags as a person (王磊租住…), English capitalised names
    (John Smith, Ms. Green)."""
    people = {m.group(0) for m in _ZH_TITLED.finditer(text)}
    # jieba's person tags find a name wherever it stands ("王磊租住的房屋…"), not only before
    # the particles the leading-name pattern knows; an extractor's item often opens with one.
    people |= {name for name in person_names(text) if not any(name in other for other in people)}
    people |= {m.group(1) for m in _ZH_ROLE_NAME.finditer(text)}
    people |= {m.group(1) for m in _ZH_LEADING_NAME.finditer(text.strip())}
    for pattern in (_EN_NAME, _EN_LEADING_NAME):
        for match in pattern.finditer(text.strip()):
            name = match.group(1)
            if may_be_english_name(name) and name.split()[0] not in _MONTHS:
                people.add(name)
    return {_without_adverb(name) for name in people}


#: Adverbs that follow a two-character name and are no part of it ("潘婷刚查了购房合同").
_ADVERBS_AFTER_NAME = frozenset("刚才又也都就还已再曾先正")


def _without_adverb(name: str) -> str:
    return name[:-1] if len(name) == 3 and name[-1] in _ADVERBS_AFTER_NAME else name


_QUANTITY_RUN = re.compile(r"\$+")


def quantity_spans(text: str) -> list[tuple[int, int, tuple[str, float]]]:
    """Where ``text`` states each quantity, as ``(start, end, (unit, value))``: the spans
    ``read_mentions`` blanks as quantities (after ids and dates, so "2025年" is no quantity)."""
    rest = read_mentions(text).rest
    spans = []
    for run in _QUANTITY_RUN.finditer(rest):
        start, end = run.span()
        if text[start:end] == rest[start:end]:
            continue  # a "$" the text itself holds, not a blanked quantity
        quantities = read_mentions(text[start:end]).quantities
        if len(quantities) == 1:
            spans.append((start, end, next(iter(quantities))))
    return spans
