"""Chinese relative dates resolved against the day they were said.

"昨天", "上周三", "上个月", "去年", "三天前" and "3月5日" (no year) only mean something next to
the day of the message. Said on 2023年5月8日, "昨天" is 2023年5月7日; the engine writes the
resolution beside the phrase ("昨天（2023年5月7日）") as it does for English. Durations
anchored to another event ("购买后约两周") are not resolved: their anchor is not the day said.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from .numbers import small_number
_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_DAY_OFFSETS = {"大前天": -3, "前天": -2, "昨天": -1, "当天": 0, "今天": 0, "明天": 1, "后天": 2}
_YEAR_OFFSETS = {"前年": -2, "去年": -1, "今年": 0, "明年": 1}
_NUMBER = r"[0-9一二两三四五六七八九十]{1,3}"

RESOLVABLE_RE = re.compile(
    rf"(?P<day>大前天|前天|昨天|今天|明天|后天)"
    rf"|(?P<week>上|下|这|本)(?:个)?(?:周|星期|礼拜)(?P<weekday>[一二三四五六日天])?"
    rf"|(?P<month>上|下|这|本)个?月(?:(?P<mday>{_NUMBER})[日号])?"
    rf"|(?P<year>去年|前年|今年|明年)(?:(?P<ymonth>{_NUMBER})月(?:(?P<yday>{_NUMBER})[日号])?)?"
    rf"|(?<![年0-9０-９])(?P<md_month>{_NUMBER})月(?P<md_day>{_NUMBER})[日号]"
    rf"|(?P<ago>{_NUMBER}|半)(?:个)?(?P<ago_unit>天|周|星期|月|年)(?:前|以前|之前)"
)


_number = small_number  # '12' → 12, '十二' → 12, '二十三' → 23, '两' → 2


def _day(value: date) -> str:
    return f"{value.year}年{value.month}月{value.day}日"


def _shift_month(value: date, months: int) -> tuple[int, int]:
    index = value.year * 12 + value.month - 1 + months
    return index // 12, index % 12 + 1


#: A part of a month after a relative month ('今年2月底', '上个月初').
_PART_OF_MONTH_RE = re.compile(r"(?<=月)(?:初|底|中旬|上旬|下旬|末)$")


#: How far from the day said a month and day with no year may lie in that day's year: further
#: ahead, it is last year's ("12月16号" said in February: the injury just past); further behind,
#: next year's ("3月12日" said in November: the coming hearing).
NEAREST_YEAR_DAYS = 213  # seven months


def _nearest_day(said_on: date, month: int, day: int) -> date:
    """The month and day in the year said, unless it lies more than ``NEAREST_YEAR_DAYS`` ahead
    (then the year before) or behind (then the year after)."""
    found = date(said_on.year, month, day)
    if (found - said_on).days > NEAREST_YEAR_DAYS:
        return _in_year(found, said_on.year - 1)
    if (said_on - found).days > NEAREST_YEAR_DAYS:
        return _in_year(found, said_on.year + 1)
    return found


def month_in_nearest_year(said_on: date, month: int) -> tuple[str, str] | None:
    """(ISO month, "month") of a month said with no year ('3月初', '2月中旬'): the nearest year's,
    by the rule of ``_nearest_day`` taken at the month's middle; None for no month."""
    if not 1 <= month <= 12:
        return None
    return f"{_nearest_day(said_on, month, 15).year}-{month:02d}", "month"


def _in_year(day: date, year: int) -> date:
    """``day`` in ``year`` (29 February in a common year is 28 February)."""
    try:
        return day.replace(year=year)
    except ValueError:
        return day.replace(year=year, day=28)


def resolve_zh(phrase: str, said_on: date | None) -> str | None:
    """The day, week, month or year a Chinese relative date names ('2023年5月7日',
    '2023年5月1日那一周', '2023年4月', '2022年'), or None when it cannot be told."""
    part = _PART_OF_MONTH_RE.search(phrase)
    if part and said_on is not None:  # '今年2月底' is '2026年2月' and its end
        month = resolve_zh(phrase[:part.start()], said_on)
        return f"{month}{part.group(0)}" if month and month.endswith("月") else None
    match = RESOLVABLE_RE.fullmatch(phrase)
    if match is None or said_on is None:
        return None
    g = match.groupdict()
    try:
        if g["day"]:
            return _day(said_on + timedelta(days=_DAY_OFFSETS[g["day"]]))
        if g["week"]:
            step = {"上": -1, "下": 1, "这": 0, "本": 0}[g["week"]]
            monday = said_on - timedelta(days=said_on.weekday()) + timedelta(weeks=step)
            if g["weekday"]:
                return _day(monday + timedelta(days=_WEEKDAYS[g["weekday"]]))
            return f"{_day(monday)}那一周"
        if g["month"]:
            year, month = _shift_month(said_on, {"上": -1, "下": 1, "这": 0, "本": 0}[g["month"]])
            if g["mday"]:
                return _day(date(year, month, _number(g["mday"])))
            return f"{year}年{month}月"
        if g["year"]:
            year = said_on.year + _YEAR_OFFSETS[g["year"]]
            if g["ymonth"] and g["yday"]:
                return _day(date(year, _number(g["ymonth"]), _number(g["yday"])))
            if g["ymonth"]:
                return f"{year}年{_number(g['ymonth'])}月"
            return f"{year}年"
        if g["md_month"]:
            return _day(_nearest_day(said_on, _number(g["md_month"]), _number(g["md_day"])))
        if g["ago"]:
            count = 0.5 if g["ago"] == "半" else _number(g["ago"])
            unit = g["ago_unit"]
            if count is None or (count == 0.5 and unit in ("天", "周", "星期")):
                return None
            if unit == "天":
                return _day(said_on - timedelta(days=int(count)))
            if unit in ("周", "星期"):
                monday = said_on - timedelta(days=said_on.weekday()) - timedelta(weeks=int(count))
                return f"{_day(monday)}那一周"
            if unit == "月":
                year, month = _shift_month(said_on, -int(count) if count >= 1 else 0)
                return f"{year}年{month}月"
            return f"{said_on.year - int(count)}年" if count >= 1 else None
    except (TypeError, ValueError):  # 2月30日, 十三月: written dates that name no day
        return None
    return None
