"""Whether a question asks about the memory as it stood on a date, and which date.

"截至2026年3月1日，押金是多少？", "截止到3月10日对方出价多少", "3月10号那会儿对方出价多少？",
"2026年3月1日的时候租金是多少", "As of 1 March 2026, what was the deposit?", "What was the offer
as at 15 March 2026?" name a date the answer should be read at; "押金是3月1日交的吗？" does not
(the date is what is asked about, not when). Each way of saying it is a named rule (``RULES``);
the date is read by the one reader of dates (``dates.dates``), relative dates against the day the
question was asked. A date the reader cannot place ("上个月" said with no day to resolve it
against) names nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from .dates import DateMention, dates


@dataclass(frozen=True)
class AsOfRule:
    """One way of saying "as it stood on": the words before or after a date, and why."""

    name: str
    why: str
    before: re.Pattern[str] | None = None  # must end right before the date
    after: re.Pattern[str] | None = None  # must start right after the date


RULES: tuple[AsOfRule, ...] = (
    AsOfRule("zh-jiezhi", "截至 / 截止(到) a date: as things stood on that day",
             before=re.compile(r"(?:截至|截止到?)\s*$")),
    AsOfRule("zh-then", "a date followed by 那会儿 / 那时(候) / 的时候 / 当时: then",
             after=re.compile(r"^\s*(?:那会儿?|那时候?|的时候|时候|当时|之时)")),
    AsOfRule("en-as-of", "as of / as at / as it stood on a date",
             before=re.compile(r"(?:\bas (?:of|at)|\bas it stood on|\bas they stood on)\s*$", re.IGNORECASE)),
)


@dataclass(frozen=True)
class AsOf:
    """The day a question asks about, the words that said it and the rule that read them."""

    day: date
    words: str
    rule: str


def as_of_in(text: str, said_on: date | None = None) -> AsOf | None:
    """The first date of ``text`` a rule of ``RULES`` says the question is to be read at; a
    month or a year said alone means its last day ("截至2026年3月" → 31 March 2026), a week its
    Sunday."""
    for mention in dates(text or "", said_on):
        day = _last_day(mention)
        if day is None:
            continue
        for rule in RULES:
            if rule.before is not None and rule.before.search(text[:mention.start]):
                return AsOf(day, mention.text, rule.name)
            if rule.after is not None and rule.after.search(text[mention.end:]):
                return AsOf(day, mention.text, rule.name)
    return None


def _last_day(mention: DateMention) -> date | None:
    if not mention.iso or mention.precision not in ("day", "week", "month", "year"):
        return None
    parts = [int(p) for p in mention.iso.split("-")]
    try:
        if mention.precision == "day":
            return date(*parts[:3])
        if mention.precision == "week":  # a week by its Monday: as it stood at its end
            return date.fromordinal(date(*parts[:3]).toordinal() + 6)
        if mention.precision == "month":
            following = date(parts[0] + (parts[1] == 12), parts[1] % 12 + 1, 1)
            return date.fromordinal(following.toordinal() - 1)
        return date(parts[0], 12, 31)
    except (ValueError, TypeError):
        return None
