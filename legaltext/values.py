"""The values a text states — a sum, a count, a length of time, a day — as comparable keys,
and the replacement of one of them: what a correction needs ("不是住院7天，是住院9天" against a
note that says "住院7天"; "not 30 June" against "until 30 June 2026").

A value's key is its kind and its magnitude: ``("money", 2000)``, ``("days", 7)``,
``("date", (None, 6, 30))``, ``("phone", "13867120935")`` (a phone number's digits, however
grouped: "138 6712 0935" is "13867120935"). A bare number ("押金是3000") is ``("number", 3000)`` and matches a
sum or a count of the same magnitude, because the slot word, not the number, said what it was.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Union

from . import dates_en
from .dates import date_parts
from .numbers import chinese_number
from .reading import read

Magnitude = Union[Decimal, float, tuple]


@dataclass(frozen=True)
class Value:
    """A value in a text: its span, the words as written and its key (kind, magnitude)."""

    start: int
    end: int
    text: str
    kind: str  # "money", "number", "date", or a duration's unit ("day", "month", …)
    magnitude: Magnitude

    def matches(self, other: "Value") -> bool:
        """The same value: the same magnitude of compatible kinds (a bare number is a sum or a
        count), a day matching a day with or without its year, a phone number the same digits."""
        if "phone" in (self.kind, other.kind):
            return self.kind == other.kind and self.magnitude == other.magnitude
        if self.kind == "date" or other.kind == "date":
            return self.kind == other.kind and _same_day(self.magnitude, other.magnitude)
        kinds = {self.kind, other.kind}
        compatible = len(kinds) == 1 or kinds <= {"money", "number"}
        return compatible and Decimal(str(self.magnitude)) == Decimal(str(other.magnitude))


_MONTHS = {name.lower(): number for number, name in enumerate(dates_en._MONTH_NAMES, start=1)}
_EN_DAY_MONTH_RE = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?\s+([A-Za-z]+)|([A-Za-z]+)\s+(\d{1,2})(?:st|nd|rd|th)?\b")
_EN_YEAR_RE = re.compile(r"\b((?:19|20)\d{2})\b")
#: The number inside a value's words: "2000" of "2000元", "两" of "两天", "3万" of "3万个".
NUMBER_TOKEN_RE = re.compile(r"\d[\d,]*(?:\.\d+)?(?:[万千]\d?)?|[零〇一二两三四五六七八九十百千万亿半壹贰叁肆伍陆柒捌玖拾佰仟]+")


#: A rate in words ("每日万分之五", "千分之一", "百分之三十"): parts of ten thousand, a thousand, a hundred.
_RATE_IN_WORDS_RE = re.compile(r"(万|千|百)分之([零〇一二两三四五六七八九十百]+|\d+(?:\.\d+)?)")
_PARTS = {"万": 10000, "千": 1000, "百": 100}
#: A time of day with its part of the day and minutes ("上午9点半", "下午2点", "14时30分").
_CLOCK_RE = re.compile(r"(?:(上午|下午|晚上|早上|中午|凌晨|傍晚)\s*)?(\d{1,2})[点时](?!钟头|间)(半|\d{1,2}分)?")


def _clock_key(match: re.Match) -> Decimal:
    """Minutes after midnight ("下午2点" is 840), the part of the day read when said."""
    hour = int(match.group(2))
    if match.group(1) in ("下午", "晚上", "傍晚") and hour < 12:
        hour += 12
    minutes = 30 if match.group(3) == "半" else int(match.group(3)[:-1]) if match.group(3) else 0
    return Decimal(hour * 60 + minutes)
#: A count written in Chinese numerals before its measure word ("两个", "三名", "十来个").
_COUNT_RE = re.compile(r"(?<![\d零〇一二两三四五六七八九十百千万])([一二两三四五六七八九十百]+)(?=来?(?:个|名|位|次|件|项|台|辆|套|张|份|人))")


def _day_of(text: str, iso: str | None) -> tuple | None:
    """(year or None, month, day) of a date's words."""
    if iso and len(iso) == 10:
        year, month, day = iso.split("-")
        return int(year), int(month), int(day)
    parts = date_parts(re.sub(r"\s+", "", text))
    if parts and parts[1] is not None:  # a day, or a month ("2021年7月入职": (2021, 7, None))
        return parts
    if iso and re.fullmatch(r"\d{4}", iso):  # a year alone ("是他2018年买的"): (2018, None, None)
        return int(iso), None, None
    match = _EN_DAY_MONTH_RE.search(text)
    if match:
        day, month = (match.group(1), match.group(2)) if match.group(1) else (match.group(4), match.group(3))
        if month.lower() in _MONTHS:
            year = _EN_YEAR_RE.search(text)
            return int(year.group(1)) if year else None, _MONTHS[month.lower()], int(day)
    return None


def _same_day(a: tuple, b: tuple) -> bool:
    """The same day, or the same month when one of the two names no day ("7月" is "2021年7月1日"'s
    month); a year missing on one side matches any."""
    same_day = a[2] == b[2] or a[2] is None or b[2] is None
    return a[1] == b[1] and same_day and (a[0] is None or b[0] is None or a[0] == b[0])


def values(text: str) -> list[Value]:
    """Every sum, count, length of time and day of ``text``, in order."""
    reading = read(text)
    found = [Value(a.start, a.end, a.text, "money", a.value) for a in reading.amounts if a.value is not None]
    found += [Value(d.start, d.end, d.text, d.unit, d.value) for d in reading.durations]
    rates = list(_RATE_IN_WORDS_RE.finditer(text))
    for rate in rates:  # "万分之五" is 0.0005 of the sum, as "0.05%" is
        count = chinese_number(rate.group(2)) if not rate.group(2)[0].isdigit() else Decimal(rate.group(2))
        if count is not None:
            found.append(Value(rate.start(), rate.end(), rate.group(0), "percent",
                               Decimal(count) * 100 / _PARTS[rate.group(1)]))
    clock = list(_CLOCK_RE.finditer(text))
    found += [Value(t.start(), t.end(), t.group(0), "time", _clock_key(t)) for t in clock]
    for n in reading.numbers:
        if text[n.end:n.end + 1] in ("%", "％"):  # "年利率6%": a rate, not a count or a sum
            found.append(Value(n.start, n.end + 1, text[n.start:n.end + 1], "percent", n.value))
        elif any(t.start() <= n.start < t.end() for t in clock):  # "上午9点半": a time of day, not a count
            continue
        elif text.startswith("号", n.end):  # "20号没空", "88号": a day of the month or a number on a door
            continue
        elif text.startswith("日内", n.end) or text.startswith("天内", n.end):  # "30日内": days
            found.append(Value(n.start, n.end + 2, text[n.start:n.end + 2], "day", n.value))
        else:
            found.append(Value(n.start, n.end, n.text, "number", n.value))
    taken = [(v.start, v.end) for v in found]
    for match in _COUNT_RE.finditer(text):  # "两个手指", "三名工人": a count in words
        if not any(a < match.end(1) and match.start(1) < b for a, b in taken):
            count = chinese_number(match.group(1))
            if count is not None:
                found.append(Value(match.start(1), match.end(1), match.group(1), "number", Decimal(count)))
    for mention in reading.identifiers:  # "新号码是138 6712 0935": a phone number is a value to correct
        if mention.kind == "phone_number":
            found.append(Value(mention.start, mention.end, text[mention.start:mention.end], "phone",
                               re.sub(r"\D", "", mention.value)))
    for mention in reading.dates:
        day = _day_of(mention.text, mention.iso)
        if day is not None:
            found.append(Value(mention.start, mention.end, mention.text, "date", day))
    # "百分之三十" is one rate, not also the number 三十
    found = [v for v in found if v.kind == "percent" or not any(r.start() <= v.start and v.end <= r.end() for r in rates)]
    return sorted(found, key=lambda v: v.start)


#: The verbs that take a part of a sum or a sum of its own out of it ("扣2000元押金", "退了3500",
#: "赔1万"): the sum deducted, refunded or paid in damages is another point than the sum the slot
#: word names ("押金是2000元"); paying ("付了3万元定金") names the sum itself.
MONEY_VERBS = frozenset("扣退赔罚垫")
#: What may stand between such a verb and its sum ("扣了2000", "还过一共5000", "要扣个两千").
_BETWEEN_VERB_AND_SUM = frozenset("了过个共约给我他她回掉去出来")


def money_verb(text: str, start: int) -> str | None:
    """The verb the sum starting at ``start`` is the object of ("扣" of "要扣2000元押金"), or None
    ("押金是2000元")."""
    position = start - 1
    while position >= 0 and start - position <= 4 and text[position] in _BETWEEN_VERB_AND_SUM:
        position -= 1
    if position >= 1 and text[position] in "付还款" and text[position - 1] in MONEY_VERBS:
        position -= 1  # "垫付了1万", "退还2000", "赔款": the verb of two characters is its first's
    return text[position] if position >= 0 and text[position] in MONEY_VERBS else None


def the_value(text: str) -> Value | None:
    """The one value ``text`` states ("住院9天", "3000", "31 July 2026"), or None."""
    found = values(text)
    return found[0] if len(found) == 1 else None


def replaced(stored: Value, new: Value) -> str:
    """The words that replace ``stored`` with the value of ``new``, in ``stored``'s own form
    when both are written alike: "2000元" with "3000" is "3000元", "两天" with "四天" is "四天"."""
    if {new.kind, stored.kind} & {"date", "phone", "time"} or "分之" in stored.text + new.text:
        return new.text  # "万分之五" with "千分之一" is "千分之一", not "千分之五"
    old_number = NUMBER_TOKEN_RE.search(stored.text)
    new_number = NUMBER_TOKEN_RE.search(new.text)
    if old_number is None or new_number is None:
        return new.text
    return stored.text[:old_number.start()] + new_number.group(0) + stored.text[old_number.end():]


#: Words after a value that say it was a guess ("二十来个", "2000左右"): a corrected value is exact.
_APPROXIMATELY_RE = re.compile(r"^(?:来|多|余|左右|上下)")


def replaced_in(text: str, stored: Value, new: Value) -> str:
    """``text`` with ``stored`` replaced by ``new`` (``replaced``), the guess after it dropped:
    "二十来个人" with "27个" is "27个人"."""
    rest = text[stored.end:]
    if new.kind != "date":
        rest = _APPROXIMATELY_RE.sub("", rest, count=1)
    return text[:stored.start] + replaced(stored, new) + rest
