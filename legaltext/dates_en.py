"""English dates in conversation: found as written, resolved against the day they were said.

"yesterday", "last Tuesday", "the week before", "two weeks ago", "on May 7" and "7 May 2023"
all name a day, week, month or year. Said on 8 May 2023, "yesterday" is 7 May 2023; the
engine writes the resolution beside the phrase in the note ("yesterday (7 May 2023)") so a
note read months later still says when. Resolution is pure date arithmetic, deterministic,
and never guesses: "a few days ago" or "on Tuesday" stay as written.

All patterns are alternations without nested quantifiers (matching stays linear).
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_MONTH_NAMES: tuple[str, ...] = (
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
)
_MONTHS: dict[str, int] = {}
for _index, _name in enumerate(_MONTH_NAMES, start=1):
    _MONTHS[_name.lower()] = _index
    _MONTHS[_name[:3].lower()] = _index
_MONTHS["sept"] = 9
#: The months as written in a sentence, capitalised: "January", "Jan", "Sept" → 1..12.
MONTHS_WRITTEN: dict[str, int] = {name.capitalize(): number for name, number in _MONTHS.items()}
_WEEKDAYS: dict[str, int] = {
    name: index
    for index, name in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))
}
_COUNTS: dict[str, int] = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "a couple of": 2, "couple of": 2, "a couple": 2,
}

_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_DAY = r"(?:3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th)?"
_YEAR = r"(?:19|20)\d{2}"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_COUNT = r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|(?:a\s+)?couple(?:\s+of)?|(?:a\s+)?few)"

_PATTERNS: tuple[tuple[str, str], ...] = (
    ("day_month", rf"\b(?P<d1>{_DAY})\s+(?:of\s+)?(?P<m1>{_MONTH})\b\.?(?:,?\s+(?P<y1>{_YEAR})\b)?"),
    ("month_day", rf"\b(?P<m2>{_MONTH})\.?\s+(?P<d2>{_DAY})\b(?:,?\s+(?P<y2>{_YEAR})\b)?"),
    ("month_year", rf"\b(?P<m3>{_MONTH})\s+(?:of\s+)?(?P<y3>{_YEAR})\b"),
    ("iso", rf"\b(?P<y4>{_YEAR})-(?P<m4>0?[1-9]|1[0-2])-(?P<d4>3[01]|[12]\d|0?[1-9])\b"),
    ("named_day", r"\b(?P<named>the\s+day\s+before\s+yesterday|yesterday|today|tonight|tomorrow|last\s+night|"
                  r"this\s+(?:morning|afternoon|evening))\b"),
    ("relative", rf"\b(?P<rel>last|next|this|past|coming)\s+(?P<unit>week(?:end)?|month|year|{_WEEKDAY})\b"),
    ("before", r"\bthe\s+(?P<bunit>day|week(?:end)?|month|year)\s+before(?:\s+last)?(?=\s*(?:[,.;:!?)]|$|and\b|but\b))"),
    ("ago", rf"\b(?P<count>{_COUNT})\s+(?P<aunit>day|week(?:end)?|month|year)s?\s+ago\b"),
    ("in_month", rf"\b(?:in|since|during|until|by|this|next|last|early|late|mid-?)\s+(?P<m6>{_MONTH})\b(?!\s*\d)"),
    ("year", rf"\b(?:in|since|during|of)\s+(?P<y5>{_YEAR})\b"),
)
DATE_RE = re.compile("|".join(f"(?P<{kind}>{pattern})" for kind, pattern in _PATTERNS), re.IGNORECASE)


def extract_dates(text: str) -> list[str]:
    """English date phrases as written, in order, without repeats: 'yesterday', '7 May 2023'."""
    seen: dict[str, None] = {}
    for match in DATE_RE.finditer(text):
        seen.setdefault(re.sub(r"\s+", " ", match.group(0)).strip(), None)
    return list(seen)


def format_day(day: date) -> str:
    """'7 May 2023' (no locale involved)."""
    return f"{day.day} {_MONTH_NAMES[day.month - 1]} {day.year}"


def _format_month(year: int, month: int) -> str:
    return f"{_MONTH_NAMES[month - 1]} {year}"


def _week_of(day: date) -> str:
    return f"the week of {format_day(day - timedelta(days=day.weekday()))}"


def _shift_month(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _count(text: str) -> int | None:
    text = re.sub(r"\s+", " ", text.lower())
    return int(text) if text.isdigit() else _COUNTS.get(text)


def resolve(phrase: str, said_on: date | None) -> str | None:
    """The day, week, month or year ``phrase`` names, written out ('7 May 2023',
    'the week of 1 May 2023', 'April 2023', '2022'), or None when it cannot be told.
    Phrases without a year or relative to now need ``said_on``."""
    match = DATE_RE.search(phrase.strip())
    if match is None:
        return None
    g = {k: v for k, v in match.groupdict().items() if v is not None}
    for prefix in ("1", "2", "4"):
        if f"m{prefix}" in g and f"d{prefix}" in g:
            month_text = g[f"m{prefix}"].lower()
            month = int(month_text) if month_text.isdigit() else _MONTHS.get(month_text[:3])
            year = int(g[f"y{prefix}"]) if g.get(f"y{prefix}") else (said_on.year if said_on else None)
            day = int(re.sub(r"\D", "", g[f"d{prefix}"]))
            if year is None or month is None:
                return None
            found = _safe_date(year, month, day)
            return format_day(found) if found else None
    if "m6" in g and said_on is not None:
        month = _MONTHS[g["m6"].lower()[:3]]
        which = phrase.strip().split()[0].lower()
        year = said_on.year + (1 if which == "next" else -1 if which == "last" else 0)
        return _format_month(year, month)
    if "m3" in g:
        return _format_month(int(g["y3"]), _MONTHS[g["m3"].lower()[:3]])
    if "y5" in g:
        return g["y5"]
    if said_on is None:
        return None
    if "named" in g:
        return format_day(said_on + timedelta(days=_NAMED_OFFSETS[re.sub(r"\s+", " ", g["named"].lower())]))
    if "rel" in g:
        return _relative(g["rel"].lower(), g["unit"].lower(), said_on)
    if "bunit" in g:
        unit = g["bunit"].lower()
        steps = 2 if phrase.lower().rstrip().endswith("last") else 1
        return _relative_steps(unit, -steps, said_on)
    if "count" in g:
        count = _count(g["count"])
        return None if count is None else _relative_steps(g["aunit"].lower(), -count, said_on)
    return None


_NAMED_OFFSETS: dict[str, int] = {
    "the day before yesterday": -2, "yesterday": -1, "last night": -1, "today": 0, "tonight": 0,
    "this morning": 0, "this afternoon": 0, "this evening": 0, "tomorrow": 1,
}


def _relative_steps(unit: str, steps: int, said_on: date) -> str:
    """``steps`` days, weeks, weekends, months or years from the day said (negative = before)."""
    if unit == "day":
        return format_day(said_on + timedelta(days=steps))
    if unit == "week":
        return _week_of(said_on + timedelta(weeks=steps))
    if unit == "weekend":
        monday = said_on - timedelta(days=said_on.weekday())
        return f"the weekend of {format_day(monday + timedelta(weeks=steps, days=5))}"
    if unit == "month":
        return _format_month(*_shift_month(said_on.year, said_on.month, steps))
    return str(said_on.year + steps)


def _relative(which: str, unit: str, said_on: date) -> str:
    """'last week', 'next month', 'this year', 'last Tuesday' from the day said."""
    if unit in _WEEKDAYS:
        target = _WEEKDAYS[unit]
        if which in ("last", "past"):
            back = (said_on.weekday() - target) % 7 or 7
            return format_day(said_on - timedelta(days=back))
        if which in ("next", "coming"):
            ahead = (target - said_on.weekday()) % 7 or 7
            return format_day(said_on + timedelta(days=ahead))
        return format_day(said_on - timedelta(days=said_on.weekday()) + timedelta(days=target))
    steps = {"last": -1, "past": -1, "this": 0, "next": 1, "coming": 1}[which]
    return _relative_steps(unit, steps, said_on)
