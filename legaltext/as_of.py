"""Whether a question asks about the memory as it stood on a date, and which date.

"截至2026年3月1日，押金是多少？", "截止到3月10日对方出价多少", "3月10号那会儿对方出价多少？",
"2026年3月1日的时候租金是多少", "As of 1 March 2026, what was the deposit?", "What was the offer
as at 15 March 2026?" name a date the answer should be read at; "押金是3月1日交的吗？" does not
(the date is what is asked about, not when). Each way of saying it is a named rule (``RULES``);
the date is read by the one reader of dates (``dates.dates``), relative dates against the day the
question was asked. A date the reader cannot place ("上个月" said with no day to resolve it
against) names nothing.

A question may also name the moment by what happened then rather than by its date: "我们第一次建议
韩立军别签离职协议的时候，公司报价是多少？", "When you first advised me to hold back the third
instalment, what price was that based on?" (``past_event_in``, rules ``EVENT_RULES``). Which message
that was, and so when, is recall's to find (``recall.events``): the words only say what to look for.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from .dates import DateMention, dates
from .reading import read


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


# --- a moment named by what happened then -----------------------------------------------------

#: What the firm (or the client with it) did at the moment asked about: advised, told, worked out,
#: sent, wrote, asked. "我们签合同的时候" is the client's own act in the world, not one of ours.
_ZH_ACT = r"(?:建议|讲|说|算|帮|分析|发|寄|写|起草|提醒|告诉|答复|回复|劝|估|核算|计算|拆分|咨询|问|找你|找您|列|提)"
_ZH_FIRST = r"(?:第一次|头一次|头一回|首次|最早|最开始|最初|一开始|刚开始|当初|起初)"
_ZH_EVENT_RE = re.compile(
    r"(?P<who>我们|咱们|你们|你|您|律师|我)(?P<first>" + _ZH_FIRST + r")?"
    r"(?P<event>[^，,。？?！!；;]{0,30}?" + _ZH_ACT + r"[^，,。？?！!；;]{0,30}?)"
    r"(?:的时候|那会儿?|那时候?|之时|时(?=[，,]))")
_EN_EVENT_RE = re.compile(
    r"\bwhen (?P<who>you|we|I)\s+(?P<first>first |originally |initially |last )?"
    r"(?P<event>(?:advised|told|recommended|calculated|worked out|suggested|sent|wrote|drafted|gave|explained|"
    r"estimated|computed|asked|consulted|discussed|talked|split)\b[^,?.;]{0,80})", re.IGNORECASE)


@dataclass(frozen=True)
class PastEvent:
    """A moment a question names by what was done then: the question's words, the act to look for,
    whether it asks for the first time it was done, and whether the firm did it (我们 / 你 / we /
    you: the assistant's advice) rather than the one asking (我咨询 / I asked)."""

    words: str
    event: str
    first: bool
    rule: str
    by_firm: bool = True


@dataclass(frozen=True)
class EventRule:
    name: str
    why: str
    pattern: re.Pattern[str]


EVENT_RULES: tuple[EventRule, ...] = (
    EventRule("zh-when-we-did", "我们/你(第一次/最早…)建议/算/讲…的时候: the moment of that advice", _ZH_EVENT_RE),
    EventRule("en-when-you-did", "when you/we (first) advised/told/sent…: the moment of that advice", _EN_EVENT_RE),
)


def past_event_in(text: str) -> PastEvent | None:
    """The moment ``text`` names by an act of the firm's (``EVENT_RULES``), or None — also when
    the question names a date for it (``as_of_in`` reads those)."""
    for rule in EVENT_RULES:
        match = rule.pattern.search(text or "")
        if match is not None:
            return PastEvent(match.group(0).strip(), match.group("event").strip(), bool(match.group("first")),
                             rule.name, by_firm=match.group("who") not in ("我", "I"))
    return None


def without_moment(question: str, words: str) -> str:
    """The question asked of a moment named by an act (``words``, as ``past_event_in`` read them),
    the act left out but the people and companies it names kept: "我们最开始给陶建明算利息的时候，本金
    按多少算的？" → "陶建明 本金按多少算的？" (the search then looks for the principal, not the
    advice). A day ("截至3月1日") is short and stays; the question stays as it is when too little
    would be left."""
    event = past_event_in(question)
    if not words or event is None or event.words != words:
        return question
    rest = question.replace(words, " ", 1).strip(" ，,：:。")
    if len(rest) < 4:
        return question
    reading = read(words)
    names = dict.fromkeys(m.text for m in (*reading.people, *reading.companies))
    return " ".join((*names, rest))
