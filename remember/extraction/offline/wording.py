"""Wording notes: a statement rewritten in the third person (Chinese "我" → "用户",
English "I" → the speaker's name), dates resolved beside their phrase, and English
tags. Who speaks is a ``Voice``."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from legaltext import dates_en as english_dates
from legaltext.dates_zh import resolve_zh
from memory.categories import Category

from .. import lexicon
from ..grounding import ASSISTANT_NAMES
from ..items import MAX_CONTENT_CHARS
from ..pronouns import apply_rules, third_person
from ..quoting import rewritten_outside_quotes

# --- rewriting into self-contained notes ------------------------------------------------

_SUBJECTLESS_RE = re.compile(
    r"(?:已经|已|刚|曾经|曾|一直|也|都)?(?:买|购买|下单|支付|付|花|交|缴|租|签|入职|离职|加班|报名|上了|收到|"
    r"联系|打了|找了|去了|保存|保留|留有|拍|录|截|要求|想|希望|打算|准备|计划|申请|投诉|起诉|咨询|喜欢|偏好|习惯|倾向|不喜欢|不希望)"
)


def with_subject(text: str, category: str, speaker: str) -> str:
    """Give a subject-less statement its subject: '已保存发票' → '用户已保存发票'."""
    if text.startswith(("用户", "助手")):
        return text
    if speaker == "assistant":
        if category == lexicon.ACTION and "建议" not in text:
            return "助手建议：" + text
        return text
    date = lexicon.DATE_RE.match(text)
    head = date.end() if date else 0
    while head < len(text) and text[head] in "，, ":
        head += 1
    if _SUBJECTLESS_RE.match(text, head):
        return text[:head] + "用户" + text[head:]
    if category == lexicon.PREFERENCE and "用户" not in text:
        return "用户偏好：" + text
    if category == lexicon.CLAIM and "用户" not in text:
        return "用户诉求：" + text
    return text


def finish(text: str) -> str:
    """End a note with a full stop, cut to the content limit."""
    text = text.strip()[: MAX_CONTENT_CHARS - 1]
    if text.endswith("！"):
        text = text[:-1]
    if text.count("“") > text.count("”"):  # a quote cut off by the split
        text += "”"
    if not text.endswith(("。", "”", "」", "』")):
        text += "。"
    return text


# --- who speaks -----------------------------------------------------------------------------

#: Speaker labels that mean the product's assistant rather than a person.


@dataclass(frozen=True)
class Voice:
    """Who is speaking on one side of a turn.

    ``speaker`` is the provenance role ("user" / "assistant"); ``name`` is how notes call
    the speaker, ``other`` how they call the one spoken to ("you"). A ``person`` is the
    user or a named second speaker of an imported conversation: everything a person says
    is kept, classified or as reported speech. The product's assistant only contributes
    statutes and advice.
    """

    speaker: str
    name: str
    other: str
    person: bool


#: How a note calls the product's assistant and an unnamed user inside a sentence.
THE_ASSISTANT, THE_USER = "the assistant", "the user"


def voices(user_name: str, reply_name: str) -> tuple[Voice, Voice]:
    """The user's voice and the reply's: a named reply speaker other than the assistant is a person."""
    user_name = (user_name or "").strip()
    reply_name = (reply_name or "").strip()
    reply_is_person = reply_name.lower() not in ASSISTANT_NAMES
    user = Voice("user", user_name, reply_name if reply_is_person else THE_ASSISTANT, True)
    reply = Voice("assistant", reply_name if reply_is_person else THE_ASSISTANT, user_name or THE_USER, reply_is_person)
    return user, reply


def english_name(voice: Voice) -> str:
    """How English notes call the speaker ('Caroline', or 'The user' without a name)."""
    return voice.name or ("The user" if voice.speaker == "user" else "The assistant")


def chinese_name(voice: Voice) -> str:
    """How Chinese reported speech calls the speaker ('alice', or '用户' without a name)."""
    return voice.name or ("用户" if voice.speaker == "user" else "助手")


#: The speaker's "我" of their own slip ("门牌号我写串了", "过户期限我上次说的是3月31日"): a lawyer
#: relaying a matter made it, not the client, and the fact is the same without it.
_OWN_SLIP_RE = re.compile(r"我(?=(?:上次|刚才|之前|前面)?(?:说|写|打|记|看|抄|填|算)(?:串|错|反|成|的是))")


def third_person_zh(text: str, voice: Voice) -> str:
    """Chinese pronouns for this voice: the user's "我" is "用户" (as in every Chinese note);
    a named second speaker's "我" is their name and their "你" is the user. The "我" of the
    speaker's own slip is dropped (``_OWN_SLIP_RE``)."""
    text = _OWN_SLIP_RE.sub("", text)
    if voice.speaker == "user" or not voice.person:
        return third_person(text, voice.speaker)
    rules = (
        (re.compile(r"我们|咱们"), f"{voice.name}一方"),
        (re.compile(r"我(?![国院])"), voice.name),
        (re.compile(r"你们|您们|[你您]"), voice.other if voice.other != "the user" else "用户"),
    )
    return rewritten_outside_quotes(text, lambda part: apply_rules(rules, part))


def with_resolved_dates(text: str, said_on: date | None) -> tuple[str, list[str]]:
    """English date phrases resolved against the day said, written beside the phrase
    ("yesterday (7 May 2023)"); returns the text and the dates (resolved where possible)."""
    out: list[str] = []
    dates: dict[str, None] = {}
    last = 0
    for match in english_dates.DATE_RE.finditer(text):
        phrase = match.group(0)
        resolved = english_dates.resolve(phrase, said_on)
        dates.setdefault(resolved or re.sub(r"\s+", " ", phrase), None)
        out.append(text[last : match.end()])
        if resolved and resolved.lower() not in phrase.lower():
            out.append(f" ({resolved})")
        last = match.end()
    out.append(text[last:])
    return "".join(out), list(dates)


def with_resolved_chinese_dates(text: str, dates: list[str], said_on: date | None,
                                year_before: str | None = None) -> tuple[str, list[str]]:
    """Chinese relative dates resolved against the day said, written beside the phrase
    ("昨天（2023年5月7日）"); returns the text and the dates (resolved where possible).
    ``year_before`` is the year the sentence before said, for a month and day whose own
    sentence says none."""
    resolved_dates: dict[str, None] = {}
    for phrase in dates:
        stated = re.search(rf"\d{{4}}年{re.escape(phrase)}", text)  # its year given elsewhere
        resolved = stated.group(0) if stated else (_in_the_year_said_before(text, phrase, said_on, year_before)
                                                   or resolve_zh(phrase, said_on))
        if resolved and resolved != phrase and not stated and phrase not in _TODAY_WORDS:
            text = re.sub(_PHRASE_ALONE.format(re.escape(phrase)), f"{phrase}（{resolved}）", text, count=1)
        resolved_dates.setdefault(resolved or phrase, None)
    return text, list(resolved_dates)


#: A month and day with no year: "9月21日", "3月16号".
_MONTH_DAY_RE = re.compile(r"^(\d{1,2})月(\d{1,2})[日号]$")
#: The year a sentence gave before: "2020年…", "去年9月…".
_YEAR_SAID_RE = re.compile(r"(?<!\d)((?:19|20)\d{2})年|(去年|前年|今年|明年)")
_SENTENCE_END_RE = re.compile(r"[。！？!?；;\n]")


def year_said(sentence: str) -> str | None:
    """The last year ``sentence`` says ("2025", "去年"), or None."""
    years = list(_YEAR_SAID_RE.finditer(sentence))
    return next(g for g in years[-1].groups() if g) if years else None


def _in_the_future(phrase: str, said_on: date | None) -> bool:
    """Whether the month and day ``phrase``, read in the year said, lies after the day said."""
    resolved = resolve_zh(phrase, said_on) if said_on else None
    found = re.match(r"(\d{4})年(\d{1,2})月(\d{1,2})日", resolved or "")
    return bool(found) and date(*map(int, found.groups())) > said_on


def _in_the_year_said_before(text: str, phrase: str, said_on: date | None, year_before: str | None = None) -> str | None:
    """A month and day in the year its sentence gave before it ("去年9月签了合同…9月21日开工" is
    2025年9月21日 said in 2026; "2020年6月16日入职的，3月16日是去面试的日子" is 2020年3月16日), or
    else the year of the sentence before (``year_before``)."""
    day = _MONTH_DAY_RE.match(phrase)
    at = re.search(_PHRASE_ALONE.format(re.escape(phrase)), text)
    if day is None or at is None:
        return None
    sentence_start = max((m.end() for m in _SENTENCE_END_RE.finditer(text, 0, at.start())), default=0)
    years = list(_YEAR_SAID_RE.finditer(text, sentence_start, at.start()))
    if not years and not (year_before and sentence_start == 0 and _in_the_future(phrase, said_on)):
        return None  # the sentence before's year only for a day that would otherwise lie ahead
    sentence_end = next((m.start() for m in _SENTENCE_END_RE.finditer(text, at.end())), len(text))
    if not years and _ARRANGED_AHEAD_RE.search(text, sentence_start, sentence_end):
        return None  # "婚礼是5月2日", "见面时间改到3月24日": a day arranged ahead is this year's, whatever the story before
    written, relative = years[-1].groups() if years else (
        (year_before, None) if year_before[0].isdigit() else (None, year_before))
    resolved = written or (resolve_zh(relative, said_on) or "").removesuffix("年")  # "去年" → "2025"
    if not resolved:
        return None
    month, day_of_month = int(day.group(1)), int(day.group(2))
    try:
        return f"{date(int(resolved), month, day_of_month).year}年{month}月{day_of_month}日"
    except ValueError:
        return None


#: Words of a day arranged ahead (a wedding, a hearing, a meeting moved): such a day is not in the
#: year the story before was told in ("去年11月订了套餐…婚礼是5月2日" is this year's 5月2日).
_ARRANGED_AHEAD_RE = re.compile(r"改到|改在|改成|定在|定于|约在|约了|约的|安排在|推迟到|提前到|延期到|婚礼|开庭|到期|截止"
                                r"|届时|将于|会在|要在|下次")


#: "今天" is the day the message was said, which the note records: written beside it, the day
#: reads as a fact ("到今天（2026年12月5日）"), so it is left as said.
_TODAY_WORDS = frozenset({"今天", "当天"})
#: A relative phrase where it stands alone: "2月28日" inside "2025年2月28日" is not the
#: phrase (resolving it there wrote "2025年2月28日（2026年2月28日）"), nor is it relative when
#: the text gives its year elsewhere.
_PHRASE_ALONE = r"(?<![年0-9０-９]){}(?![（(])"


def english_tags(category: Category, dates: list[str], amounts: list[str], *extra: str) -> list[str]:
    """Tags of an English note: its category slug, any extra tag, timeline and amount."""
    tags = [category.slug, *extra]
    if dates:
        tags.append("timeline")
    if amounts:
        tags.append("amount")
    return tags


def finish_english(text: str) -> str:
    """End with a full stop, cut to the content limit (names keep their case: 'alice')."""
    text = text.strip()[: MAX_CONTENT_CHARS - 1]
    if text.startswith((f"{THE_ASSISTANT} ", f"{THE_USER} ")):  # a sentence that opened with "I"
        text = text[0].upper() + text[1:]
    if not text.endswith((".", "!", "?", '"', "”")) and not (text.endswith(("'", "’")) and text[-2:-1] in ".!?"):
        text += "."
    return text
