"""Dates and durations as written, and what day, month or year they name.

Chinese ('2024年3月5日', '3月初', '上周三', '去年3月15日', '下个月15号', '两周后') and English
('7 May 2023', 'last Tuesday', 'two weeks ago'). A relative date is resolved against the day it
was said (``dates_zh.resolve_zh``, ``dates_en.resolve``) and keeps that anchor; a calendar date
is normalised to ISO with its precision (day, week, month or year).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from . import dates_en, dates_zh
from .numbers import CN_NUMERAL_CHARS, normalised, small_number

#: A count in Chinese or Arabic digits ('3', '三', '十五', '几').
NUM = r"[0-9０-９一二两三四五六七八九十百千零〇半几]+"
_CN_DIGIT = r"[0-9０-９]"
_DATE_PATTERNS: tuple[str, ...] = (
    # absolute: 2024年3月5日, 2024-03-05, 2024年3月, 3月5日, 三月五日, 3月初
    rf"{_CN_DIGIT}{{4}}\s*年\s*{_CN_DIGIT}{{1,2}}\s*月(?:\s*{_CN_DIGIT}{{1,2}}\s*[日号])?",
    rf"{_CN_DIGIT}{{4}}[-/.]{_CN_DIGIT}{{1,2}}[-/.]{_CN_DIGIT}{{1,2}}",
    rf"{_CN_DIGIT}{{4}}\s*年(?:初|底|中|末)?",
    rf"{_CN_DIGIT}{{1,2}}\s*月\s*{_CN_DIGIT}{{1,2}}\s*[日号]",
    r"[一二三四五六七八九十]{1,2}月[一二三四五六七八九十]{1,3}[日号]",
    rf"(?:{_CN_DIGIT}{{1,2}}|[一二三四五六七八九十]{{1,2}})\s*月(?:初|底|中旬|上旬|下旬|末)",
    # relative: 上周三, 上个月, 去年, 昨天
    r"(?:上|下|这|本)(?:个)?(?:周|星期|礼拜)[一二三四五六日天]?",
    r"(?:上|下|这|本)个?月(?:初|底|中旬)?",
    r"(?:去年|前年|今年|明年)(?:[0-9一二三四五六七八九十]{1,2}月)?",
    r"(?:昨天|前天|今天|明天|后天|大前天|当天|次日|当晚)",
    # durations anchored to an event: 两周后, 约两周, 三天内, 半年前
    rf"(?:约|大约|大概|将近|不到|超过){NUM}\s*个?(?:天|日|周|星期|礼拜|月|年)(?:后|前|内|以后|以前|之后|之前|以来|左右|多)?",
    rf"(?<![0-9０-９一二两三四五六七八九十百千零〇半几]){NUM}\s*个?(?:天|日|周|星期|礼拜|月|年)(?:后|前|内|以后|以前|之后|之前|以来|左右)",
)
#: The Chinese date phrases: a date as written ('2024年3月5日', '上周三', '两周后').
DATE_RE = re.compile("|".join(f"(?:{p})" for p in _DATE_PATTERNS))
#: Whole phrases the reader takes before ``DATE_RE``'s shorter ones: a relative month or year
#: with its day ('去年3月15日', '下个月15号'), which ``DATE_RE`` reads as '去年3月' / '下个月'.
_WHOLE_RE = re.compile(
    r"(?:去年|前年|今年|明年)[0-9一二三四五六七八九十]{1,2}月(?:[0-9一二三四五六七八九十]{1,3}[日号]|初|底|中旬|上旬|下旬|末)"
    r"|(?:上|下|这|本)个?月(?:[0-9一二三四五六七八九十]{1,3}[日号]|初|底|中旬|上旬|下旬|末)"
)
READER_DATE_RE = re.compile(f"{_WHOLE_RE.pattern}|{DATE_RE.pattern}")
_EVENT_ANCHORED_RE = re.compile(r"^(?:约|大约|大概|将近|不到|超过)|[后内以来左右多]$")

_SPACES_RE = re.compile(r"\s+")
_LATIN_RE = re.compile(r"[A-Za-z]{2}")


def _join_space(match: re.Match[str]) -> str:
    """Spaces inside a match vanish ('5000 元' → '5000元') unless they separate English words."""
    text, start, end = match.string, match.start(), match.end()
    before = text[start - 1] if start else ""
    after = text[end] if end < len(text) else ""
    return " " if (before.isascii() and before.isalpha()) or (after.isascii() and after.isalpha()) else ""


def find_all(pattern: re.Pattern[str], text: str) -> list[str]:
    """Distinct matches in order of appearance, inner whitespace removed."""
    seen: dict[str, None] = {}
    for match in pattern.finditer(text):
        value = _SPACES_RE.sub(_join_space, match.group(0)).rstrip(",，")
        if value:
            seen.setdefault(value, None)
    return list(seen)


def date_phrases(text: str) -> list[str]:
    """Dates and event-anchored durations as written: '2024年3月5日', '上周三', '两周后', and
    English ones ('yesterday', 'last Tuesday', '7 May 2023')."""
    found = find_all(READER_DATE_RE, text)
    if _LATIN_RE.search(text):
        found.extend(d for d in dates_en.extract_dates(text) if d not in found)
    return found


# --- calendar dates ------------------------------------------------------------------------

_NUM_PART = r"\d{1,4}|[〇零一二两三四五六七八九十]{1,4}"
_DATE_PARTS_RE = re.compile(
    rf"(?:(?P<y>{_NUM_PART})\s*年)?\s*(?:(?P<m>{_NUM_PART})\s*月)?\s*(?:(?P<d>{_NUM_PART})\s*[日号])?"
)
_ISO_DATE_RE = re.compile(r"(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})")

DateParts = tuple[int | None, int | None, int | None]


def _part(text: str | None) -> int | None:
    return small_number(text) if text else None


def date_parts(phrase: str) -> DateParts | None:
    """(year, month, day) of a calendar date ('2024年3月5日', '2024-03-05', '三月五日'), each
    None when not written; None for a relative date ('上周三', '约两周后', 'yesterday')."""
    phrase = normalised(phrase)
    iso = _ISO_DATE_RE.search(phrase)
    if iso:
        return int(iso.group(1)), int(iso.group(2)), int(iso.group(3))
    if re.search(r"去年|前年|今年|明年|上|下|这|本", phrase):
        return None
    for match in _DATE_PARTS_RE.finditer(phrase):
        if any(match.group(key) for key in ("y", "m", "d")):
            return _part(match.group("y")), _part(match.group("m")), _part(match.group("d"))
    return None


def calendar_dates(text: str) -> list[DateParts]:
    """Every calendar date written in ``text``, read whole ('租约2025年6月30日' is one date, where
    the phrase patterns also see a duration '约2025年')."""
    text = normalised(text)
    found = [(int(y), int(m), int(d)) for y, m, d in _ISO_DATE_RE.findall(text)]
    for match in _DATE_PARTS_RE.finditer(text):
        if any(match.group(key) for key in ("y", "m", "d")):
            found.append((_part(match.group("y")), _part(match.group("m")), _part(match.group("d"))))
    return found


# --- the reader's dates --------------------------------------------------------------------

@dataclass(frozen=True)
class DateMention:
    """A date in the text: span, words, the ISO day / month / year it names (a week by its
    Monday), its precision, and the day a relative date was resolved against (None for a
    calendar date, or when it could not be resolved)."""

    start: int
    end: int
    text: str
    iso: str | None
    precision: str | None  # "day", "week", "month", "year"
    anchor: date | None = None

    @property
    def relative(self) -> bool:
        return self.anchor is not None


#: A resolution as ``dates_zh`` writes it; a part of a month after it ("2026年2月底", "2026年3月初")
#: is read as the month.
_ZH_RESOLVED_RE = re.compile(r"^(\d{4})年(?:(\d{1,2})月(?:(\d{1,2})日(那一周)?|初|底|中旬|上旬|下旬|末)?)?$")
#: A part of a month said with no year ('3月初', '2月中旬', '十二月下旬').
_PART_OF_A_MONTH_RE = re.compile(r"(\d{1,2}|[一二三四五六七八九十]{1,3})月(?:初|底|中旬|上旬|下旬|末)")
_EN_MONTHS = {name.lower(): i for i, name in enumerate(dates_en._MONTH_NAMES, start=1)}
_EN_RESOLVED_RE = re.compile(r"^(?:the (week|weekend) of )?(?:(\d{1,2}) )?(?:([A-Z][a-z]+) )?(\d{4})$")


def _iso(year: int, month: int | None = None, day: int | None = None) -> tuple[str, str] | None:
    try:
        if day is not None and month is not None:
            return date(year, month, day).isoformat(), "day"
        if month is not None:
            return f"{year:04d}-{month:02d}", "month" if 1 <= month <= 12 else None
        return f"{year:04d}", "year"
    except ValueError:
        return None


def _from_resolved(resolved: str) -> tuple[str, str] | None:
    """ISO and precision of a resolution as ``dates_zh`` / ``dates_en`` write it."""
    zh = _ZH_RESOLVED_RE.match(resolved)
    if zh:
        year, month, day, week = zh.groups()
        found = _iso(int(year), int(month) if month else None, int(day) if day else None)
        return (found[0], "week") if found and week else found
    en = _EN_RESOLVED_RE.match(resolved)
    if en:
        week, day, month, year = en.groups()
        month_number = _EN_MONTHS.get(month.lower()) if month else None
        found = _iso(int(year), month_number, int(day) if day else None)
        return (found[0], "week") if found and week else found
    return None


def _mention(text: str, start: int, end: int, said_on: date | None) -> DateMention:
    phrase = text[start:end]
    compact = _SPACES_RE.sub("", phrase) if not _LATIN_RE.search(phrase) else phrase
    parts = date_parts(compact) if not _LATIN_RE.search(phrase) else None
    if parts and parts[0] is not None:
        found = _iso(*parts) if parts[1] is not None or parts[2] is None else None
        return DateMention(start, end, phrase, *(found or (None, None)))
    part_of_month = _PART_OF_A_MONTH_RE.fullmatch(compact)
    if part_of_month and said_on is not None:  # '3月下旬' said in April 2026: March 2026, as a month
        month = dates_zh.month_in_nearest_year(said_on, small_number(part_of_month.group(1)) or 0)
        return DateMention(start, end, phrase, *(month or (None, None)), anchor=said_on if month else None)
    resolved = dates_zh.resolve_zh(compact, said_on) if not _LATIN_RE.search(phrase) else dates_en.resolve(phrase, said_on)
    found = _from_resolved(resolved) if resolved else None
    if found:
        written_year = re.search(r"(?<!\d)(?:19|20)\d{2}(?!\d)", phrase)  # '7 May 2023' needs no anchor
        return DateMention(start, end, phrase, *found, anchor=None if written_year else said_on)
    return DateMention(start, end, phrase, None, None)


#: A lunar-calendar date ('农历3月5日', '阴历八月十五'): not a day of the calendar the reader places.
_LUNAR_BEFORE_RE = re.compile(r"(?:农历|阴历|旧历)\s*$")


def dates(text: str, said_on: date | None) -> list[DateMention]:
    """Every date of ``text`` (not the event-anchored durations '两周后'), normalised; a lunar
    date ('阴历3月5日') is found but placed nowhere (no ISO): read as the solar 5 March it would be
    a wrong day, and the reader converts no lunar calendar."""
    found: list[DateMention] = []
    for match in READER_DATE_RE.finditer(text):
        if _EVENT_ANCHORED_RE.search(match.group(0)):
            continue
        if _LUNAR_BEFORE_RE.search(text, 0, match.start()):
            found.append(DateMention(match.start(), match.end(), match.group(0), None, None))
            continue
        found.append(_mention(text, match.start(), match.end(), said_on))
    for match in dates_en.DATE_RE.finditer(text):
        if not any(match.start() < m.end and m.start < match.end() for m in found):
            found.append(_mention(text, match.start(), match.end(), said_on))
    return sorted(found, key=lambda m: m.start)


# --- durations -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Duration:
    """A length of time: '3个月', '两年', '90 days', '半年' (value 0.5, unit year)."""

    start: int
    end: int
    text: str
    value: float
    unit: str  # "hour", "day", "week", "month", "year"


_ZH_UNITS = {"小时": "hour", "天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week",
             "个月": "month", "月": "month", "年": "year"}
_ZH_DURATION_RE = re.compile(
    rf"(?<![0-9０-９{CN_NUMERAL_CHARS}半几第])(?P<n>[0-9]{{1,3}}(?:\.\d+)?|[{CN_NUMERAL_CHARS}]{{1,4}}|半)\s*"
    r"(?P<unit>个小时|小时|个工作日|个月|个星期|个礼拜|天|周|星期|礼拜|年)(?!前|以前|之前|底|初|中|末|度)"
)
_EN_COUNTS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
              "nine": 9, "ten": 10, "twelve": 12, "a": 1, "an": 1, "half a": 0.5}
_EN_DURATION_RE = re.compile(
    r"\b(?P<n>\d{1,4}(?:\.\d+)?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|half a|an?)\s+"
    r"(?P<unit>hours?|days?|weeks?|months?|years?)\b(?!\s+ago)", re.IGNORECASE
)


def durations(text: str) -> list[Duration]:
    """Every length of time in ``text``, Chinese and English."""
    found: list[Duration] = []
    for match in _ZH_DURATION_RE.finditer(text):
        n, unit = match.group("n"), match.group("unit").lstrip("个").replace("工作日", "天")
        value = 0.5 if n == "半" else float(n) if n[0].isdigit() else small_number(n)
        if value is None or (unit == "年" and value >= 100):
            continue  # '2025年' is a year, not a duration
        found.append(Duration(match.start(), match.end(), match.group(0), float(value),
                              _ZH_UNITS.get(unit, _ZH_UNITS.get("个" + unit, "day"))))
    for match in _EN_DURATION_RE.finditer(text):
        n = match.group("n").lower()
        value = float(n) if n[0].isdigit() else _EN_COUNTS[n]
        found.append(Duration(match.start(), match.end(), match.group(0), value,
                              match.group("unit").lower().rstrip("s")))
    return sorted(found, key=lambda d: d.start)
