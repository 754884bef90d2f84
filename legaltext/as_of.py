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
class DateWordsRule:
    """One way of saying what a date is to a fact or a question — "as it stood on" (``RULES``),
    "held from" (``HELD_FROM_RULES``): the words before or after the date, and why."""

    name: str
    why: str
    before: re.Pattern[str] | None = None  # must end right before the date
    after: re.Pattern[str] | None = None  # must start right after the date


RULES: tuple[DateWordsRule, ...] = (
    DateWordsRule("zh-jiezhi", "截至 / 截止(到) a date: as things stood on that day",
                  before=re.compile(r"(?:截至|截止到?)\s*$")),
    DateWordsRule("zh-then", "a date followed by 那会儿 / 那时(候) / 的时候 / 当时: then",
                  after=re.compile(r"^\s*(?:那会儿?|那时候?|的时候|时候|当时|之时)")),
    DateWordsRule("en-as-of", "as of / as at / as it stood on a date",
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
_ZH_ACT = (r"(?:建议|讲|说|算|帮|分析|发|寄|写|起草|提醒|告诉|答复|回复|劝|估|核算|计算|拆分|咨询|问|找你|找您|列|提|"
           r"让|叫|引|看)")
_ZH_FIRST = r"(?:第一次|头一次|头一回|首次|最早|最开始|最初|一开始|刚开始|当初|起初)"
#: Words that put the act in the past by themselves ("那次", "那会儿", "当时" after it) — and the
#: plain "的时候 / 时" that need a past word in the act or a "第一次" before it: "你建议我起诉的时候
#: 要注意什么？" asks about the future.
_ZH_THEN = r"(?:[，,]\s*)?(?:那会儿?|那时候?|之时|那一?次|那一?回|之前|当时)"
_ZH_WHEN = r"(?:的时候|时候|(?<![及按临同暂随准小当])时(?![间效候代]))"
_ZH_PAST = re.compile(r"当时|当初|上次|之前|那次|曾经|过|了")
_ZH_WHO = r"(?:我们|咱们|你们|你|您|律师|我)"
_ZH_EVENT_RE = re.compile(
    r"(?P<first0>" + _ZH_FIRST + r")?(?P<who>" + _ZH_WHO + r")(?P<first>" + _ZH_FIRST + r")?"
    r"(?P<event>[^，,。？?！!；;]{0,40}?" + _ZH_ACT + r"[^，,。？?！!；;]{0,40}?)"
    r"(?P<then>" + _ZH_THEN + r"|" + _ZH_WHEN + r")")
_ZH_FIRST_EVENT_RE = re.compile(
    r"(?P<first>" + _ZH_FIRST + r")(?P<event>" + _ZH_ACT + r"[^，,。？?！!；;]{0,40}?)"
    r"(?P<then>" + _ZH_THEN + r"|" + _ZH_WHEN + r")")
_EN_VERBS = (r"(?:advised|told|recommended|calculated|worked out|suggested|sent|wrote|drafted|gave|explained|"
             r"estimated|computed|asked|consulted|discussed|talked|split|listed|proposed|warned|mentioned|said)")
_EN_EVENT_RE = re.compile(
    r"\b(?:when|at the time|back when|the time)\s+(?P<who>you|we|I)\s+(?P<first>first |originally |initially |last )?"
    r"(?P<event>" + _EN_VERBS + r"\b[^,?.;]{0,80})", re.IGNORECASE)
_EN_ADVICE_RE = re.compile(
    r"\b(?P<who>your|our) (?P<first>first |earliest |original |initial )?(?P<event>advice (?:on|about|regarding) "
    r"[^,?.;]{2,60}?)(?= use\b| based\b| rest\b|,|\?|$)", re.IGNORECASE)


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
    EventRule("zh-when-we-did", "我们/你(第一次…)建议/算/讲…那次 / 那会儿 / 的时候: the moment of that act", _ZH_EVENT_RE),
    EventRule("zh-first-time-did", "第一次/最早 算/建议…时 (no one named): the first time the firm did it",
              _ZH_FIRST_EVENT_RE),
    EventRule("en-when-you-did", "when / at the time / back when you (first) advised, told, sent…", _EN_EVENT_RE),
    EventRule("en-your-advice", "your (first) advice on …: the moment of that advice", _EN_ADVICE_RE),
)


def past_event_in(text: str) -> PastEvent | None:
    """The moment ``text`` names by an act (``EVENT_RULES``), or None. A plain "的时候 / 时" names
    one only after a "第一次"-word or with a past word in the act ("你当时说…的时候")."""
    for rule in EVENT_RULES:
        for match in rule.pattern.finditer(text or ""):
            groups = match.groupdict()
            first = bool(groups.get("first") or groups.get("first0"))
            then = groups.get("then")
            plain_when = then is not None and re.fullmatch(_ZH_WHEN, then)
            if plain_when and not first and not _ZH_PAST.search(match.group("event")):
                continue  # "你建议我起诉的时候要注意什么": not a moment of the past
            who = (groups.get("who") or "").lower()
            return PastEvent(match.group(0).strip(" ，,"), match.group("event").strip(), first, rule.name,
                             by_firm=who not in ("我", "i"))
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


# --- when a fact began to hold, from its own words -----------------------------------------------

HELD_FROM_RULES: tuple[DateWordsRule, ...] = (
    DateWordsRule("zh-from-date", "自 / 从 a date (起 / 开始 / 至 … after it): held from that day",
                  before=re.compile(r"(?:自|从)\s*$"), after=re.compile(r"^\s*(?:起|开始|以来|至|到|—|-|~)")),
    DateWordsRule("zh-date-on", "a date followed by 起 / 开始 / 起算: held from that day",
                  after=re.compile(r"^\s*(?:起(?!诉|草|算出)|开始)")),
    DateWordsRule("en-from-date", "from / starting / effective / as from a date: held from that day",
                  before=re.compile(r"\b(?:from|starting(?: on)?|effective(?: from| as of| on)?|as from|beginning)\s*$",
                                    re.IGNORECASE)),
)


def held_from(text: str, said_on: date | None = None) -> tuple[date, str] | None:
    """The day a fact's own words say it began to hold ("2024年3月起租金5000元" → 1 March 2024,
    "自2025年1月1日至2026年12月31日" → 1 January 2025, "effective from 1 April 2026"), and the rule
    that read it; None when they say none (then it held from when it was said). A month means its
    first day; a date the reader cannot place names nothing."""
    for mention in dates(text or "", said_on):
        if not mention.iso or mention.precision not in ("day", "month"):
            continue
        parts = [int(p) for p in mention.iso.split("-")]
        try:
            day = date(parts[0], parts[1], parts[2] if len(parts) > 2 else 1)
        except (ValueError, IndexError):
            continue
        before, after = text[:mention.start], text[mention.end:]
        for rule in HELD_FROM_RULES:
            if (rule.before is None or rule.before.search(before)) and (rule.after is None or rule.after.search(after)):
                return day, rule.name
    return None
