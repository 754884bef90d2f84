"""The offline extraction engine: rule-based knowledge extraction for when no
LLM is configured (DESIGN "Models that run here").

It is honest about what rules can do. It reads the user's message (and,
secondarily, the assistant's reply, from which it only takes statutes and
advice), splits it into sentences and clauses, drops questions and chit-chat,
classifies what is left with the category lexicon, and turns each piece into a
short third-person note ("我" → "用户") with the dates, amounts and keywords it
mentions. Anything it cannot classify is left out rather than guessed.

Input is capped at ``MAX_INPUT_CHARS`` per side: the LLM path only ever sees
500 + 1500 characters of a turn (seed 001) and at most five items are kept, so
reading further into a pasted megabyte would cost time without adding notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from typing import Callable

from . import lexicon
from .chinese_dates import resolve_zh
from .english import cues as english_cues
from .english import dates as english_dates
from .english import rewrite as english_rewrite
from .english import stopwords as english_stopwords
from .items import (
    MAX_CONTENT_CHARS,
    MAX_ITEMS_PER_TURN,
    Category,
    ExtractedItem,
    clean_text,
    content_key,
    default_memory_type,
    default_scope,
    importance_for,
    item_tags,
)
from .prompt import is_trivial_turn

#: Characters read from each side of a turn (see the module docstring).
MAX_INPUT_CHARS = 20_000
#: Sentences examined per side; a turn that long is a pasted document.
MAX_SENTENCES = 400
#: Longest piece of text that can become one note; longer runs without
#: punctuation are pasted material, not a statement.
MAX_UNIT_CHARS = 300
#: Shortest note worth keeping ("商家不给退" is five characters).
MIN_UNIT_CHARS = 5
#: At most this many of a turn's items may come from the assistant's reply.
MAX_REPLY_ITEMS = 3
#: The only categories taken from the assistant's reply: its restatements of
#: the user's facts would duplicate them, its hedged guesses are not facts.
REPLY_CATEGORIES: frozenset[str] = frozenset({Category.LAW.value, Category.ACTION.value})

# --- splitting --------------------------------------------------------------------

_QUOTE_PAIRS = {"“": "”", "「": "」", "『": "』", "‘": "’"}
_CLOSERS = frozenset(_QUOTE_PAIRS.values())
_TERMINATORS = frozenset("。！？；!?;…")
_MAX_QUOTE_CHARS = 200


def _split_outside_quotes(text: str, is_boundary: Callable[[str, int], bool]) -> list[str]:
    """Split ``text`` after each boundary character that is not inside quotes.

    A closing quote right after a terminator ('他说：“不能退。”') ends the
    sentence with the quote kept; an unbalanced quote stops counting after
    200 characters so one stray '“' cannot swallow the rest of the text.
    Newlines always split.
    """
    parts: list[str] = []
    start = 0
    depth = 0
    ascii_open = False
    quote_len = 0
    i = 0
    n = len(text)
    while i < n:
        ch = text[i]
        if ch == "\n":
            parts.append(text[start:i])
            start, depth, ascii_open, quote_len = i + 1, 0, False, 0
            i += 1
            continue
        if ch in _QUOTE_PAIRS:
            depth += 1
            quote_len = 0
        elif ch in _CLOSERS and depth:
            depth -= 1
            if depth == 0 and not ascii_open and i > 0 and text[i - 1] in _TERMINATORS:
                parts.append(text[start : i + 1])
                start = i + 1
        elif ch == '"':
            ascii_open = not ascii_open
            quote_len = 0
        elif depth or ascii_open:
            quote_len += 1
            if quote_len > _MAX_QUOTE_CHARS:
                depth, ascii_open, quote_len = 0, False, 0
        if not depth and not ascii_open and is_boundary(text, i):
            end = i + 1
            while end < n and (text[end] in _TERMINATORS or text[end] in _CLOSERS):
                end += 1
            parts.append(text[start:end])
            start = end
            i = end
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


#: English abbreviations whose full stop does not end a sentence.
_ABBREVIATIONS = frozenset({"mr", "mrs", "ms", "dr", "prof", "st", "jr", "sr", "vs", "etc", "e.g", "i.e", "no", "inc", "ltd", "co"})


def _sentence_boundary(text: str, i: int) -> bool:
    ch = text[i]
    if ch in _TERMINATORS:
        return True
    if ch == ".":  # ASCII full stop ends a sentence only before a space, not in 3.5 or 1. or "Dr."
        after_space = i + 1 == len(text) or text[i + 1].isspace()
        if not after_space or i == 0:
            return False
        if text[i - 1].isdigit():  # "1. " is a list number; "in 2023. " and "$3,500. " end sentences
            number = re.search(r"[\d,]+$", text[max(0, i - 12) : i])
            return number is not None and len(number.group(0)) >= 3 and i + 1 < len(text)
        word = text[max(0, i - 5) : i].rsplit(None, 1)[-1].lower() if text[max(0, i - 5) : i].strip() else ""
        return word not in _ABBREVIATIONS
    return False


def _clause_boundary(text: str, i: int) -> bool:
    ch = text[i]
    if ch == "，":
        return True
    if ch == ",":  # not the thousands separator in 3,299
        return not (0 < i < len(text) - 1 and text[i - 1].isdigit() and text[i + 1].isdigit())
    return False


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split at 。！？；… and their ASCII forms and at newlines, quotes kept whole."""
    return _split_outside_quotes(text, _sentence_boundary)


def split_clauses(sentence: str) -> list[str]:
    """Comma-separated clauses of a sentence, ignoring commas inside quotes and numbers."""
    return [c.strip("，, ") for c in _split_outside_quotes(sentence, _clause_boundary) if c.strip("，, ")]


# --- what to drop ---------------------------------------------------------------------

_MARKDOWN_RE = re.compile(
    r"^\s*(?:#{1,6}\s*|[-*•·>]\s+|\d{1,2}[.、)）]\s*|[（(][一二三四五六七八九十\d]{1,3}[)）]\s*|[一二三四五六七八九十]{1,3}、\s*)"
)
_INLINE_MARKUP_RE = re.compile(r"\*\*|__|`")
#: A bold heading before a colon ('**先协商**：') is layout, not content.
_HEADING_RE = re.compile(r"^\s*(?:\*\*|__)[^*_\n]{1,12}(?:\*\*|__)\s*[：:]\s*")
_FILLER_RE = re.compile(
    r"^(?:嗯+|啊+|哦+|噢+|喔+|额+|呃+|对了|另外|其实|说实话|老实说|补充一下|再补充一下|顺便说一下|"
    r"情况是这样的?|是这样的?|那个|就是说|还有就是|然后|而且|所以|但是|不过|可是|总之)[，,、：:\s]*"
)
_TRAILING_RE = re.compile(r"[啊呀哈嘛呗哦噢啦咯哇吧~～\s]+$")
_TRAILING_PUNCT_RE = re.compile(r"[，,、；;：:。.！!？?…‼⁉\s]+$")

_QUESTION_RE = re.compile(
    r"(?:吗|么|呢)$|怎么办|咋办|咋整|怎么弄|怎么处理|该怎么|该如何|如何处理|如何是好|能不能|可不可以|可以吗|"
    r"行不行|是不是|有没有用|要不要|该不该|会不会|为什么|为啥|凭什么|怎么样|多少钱|什么时候|哪里|哪儿|哪个|哪些|啥"
)
_CHITCHAT_RE = re.compile(
    r"^(?:你好|您好|哈喽|在吗|谢谢|多谢|感谢|辛苦了|麻烦了|好的?|好吧|行|嗯+|哦+|对|对的|是的|没问题|收到|ok|OK|"
    r"(?:我|那)?(?:明白|知道|懂|清楚)了?)$"
    r"|^(?:谢谢|多谢|感谢)"
    r"|^(?:那|那么|好|好的|行)?(?:请|麻烦|拜托)?(?:你|您)?(?:再|先|能|可以|能否|能不能|帮忙|给)*(?:帮我|帮忙|替我|给我)"
    r"|^(?:我)?(?:想|还想|再)?(?:问|请教|咨询)(?:一下|下|个问题|您|你)"
    r"|(?:总结|概括|归纳|整理|解释|分析|梳理|翻译|写|起草|列|说|讲|看|查|算|改|润色|讲解|介绍)(?:一下|一遍|下吧)$"
)
#: Markers of a lasting preference; they keep "以后给我先说结论" from being
#: dropped as a one-off request.
_LASTING_RE = re.compile(r"以后|每次|今后|一般|总是|习惯|喜欢|偏好|倾向")
_CONNECTIVE_RE = re.compile(
    r"^(?:因为|由于|所以|因此|导致|结果|但|可是|不过|而且|并且|并|且|还|也|又|再|然后|之后|随后|最后|以及|"
    r"或者|或|及|同时|否则|以免|从而|于是|就|才|都|甚至|包括|比如|例如|即|虽然|尽管|如果|只要)"
)
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z]{2,}")
#: A clause opening with these is a dependent phrase ('根据《…法》第…条'); the
#: clause after it belongs to the same note.
_DEPENDENT_RE = re.compile(r"^(?:根据|依据|按照|依照|鉴于|如果|若|假如|虽然|尽管|因为|由于|为了)")


def is_english(text: str) -> bool:
    """Text without a Chinese character (English, or any Latin-script language)."""
    return not _CJK_RE.search(text)


def _tidy(clause: str) -> str:
    """Remove list markers, inline markdown, leading fillers and trailing particles."""
    text = _INLINE_MARKUP_RE.sub("", _HEADING_RE.sub("", _MARKDOWN_RE.sub("", clause)))
    filler = english_cues.FILLER_RE if is_english(text) else _FILLER_RE
    for _ in range(3):
        stripped = filler.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    text = _TRAILING_PUNCT_RE.sub("", text)
    return _TRAILING_RE.sub("", text).strip()


def is_question(clause: str) -> bool:
    """A clause asking something ('那我现在该咋办', '这是不是拖时间', 'I wonder if …')."""
    if is_english(clause):
        return bool(english_cues.QUESTION_RE.search(clause.strip()))
    return bool(_QUESTION_RE.search(_TRAILING_PUNCT_RE.sub("", clause)))


def is_chitchat(clause: str) -> bool:
    """Greetings, thanks, acknowledgements and one-off requests to the assistant
    ('你再帮我总结一下'); a lasting preference ('以后先给结论') is not chit-chat."""
    if is_english(clause):
        text = _TRAILING_PUNCT_RE.sub("", clause.strip())
        if english_cues.LASTING_RE.search(text):
            return False
        return bool(english_cues.CHITCHAT_RE.search(text))
    if _LASTING_RE.search(clause):
        return False
    return bool(_CHITCHAT_RE.search(clause))


# --- scoring --------------------------------------------------------------------------


@dataclass
class _Scores:
    """Lexicon evidence for one piece of text."""

    points: dict[str, int]
    strong: dict[str, int]
    dates: list[str]
    amounts: list[str]
    law_refs: list[str]

    def ranked(self, allowed: frozenset[str] | None = None) -> list[str]:
        cats = [c for c in lexicon.CATEGORY_PRIORITY if allowed is None or c in allowed]
        return sorted(cats, key=lambda c: (-self.points[c], lexicon.CATEGORY_PRIORITY.index(c)))

    def decisive(self, category: str) -> bool:
        """True when a strong cue (or, for a fact, a date or amount) supports ``category``."""
        if self.strong[category]:
            return True
        return category == lexicon.FACT and bool(self.dates or self.amounts)


def _score(text: str) -> _Scores:
    points = {c: 0 for c in lexicon.CATEGORY_PRIORITY}
    strong = {c: 0 for c in lexicon.CATEGORY_PRIORITY}
    tables = [lexicon.CATEGORY_CUES] if _CJK_RE.search(text) else []
    if _LATIN_WORD_RE.search(text):
        tables.append(english_cues.CATEGORY_CUES)
    for table in tables:
        for category, cues in table.items():
            for cue in cues:
                if cue.pattern.search(text):
                    points[category] += cue.weight
                    strong[category] += cue.strong
    dates = lexicon.extract_dates(text)
    amounts = lexicon.extract_amounts(text)
    if dates:
        points[lexicon.FACT] += 2
    if amounts:
        points[lexicon.FACT] += 2
        if points[lexicon.CLAIM]:
            points[lexicon.CLAIM] += 1
    return _Scores(points, strong, dates, amounts, lexicon.extract_law_refs(text))


# --- units: the pieces of text that may become notes ---------------------------------


@dataclass
class _Unit:
    text: str
    from_question: bool


def _units(text: str) -> list[_Unit]:
    """Group each sentence's kept clauses into units of one category.

    Questions and chit-chat clauses are dropped. In a sentence that ends with
    a question mark its last clause is the question, and the other clauses
    stay only when they carry a strong cue or an entity. A clause that does
    not begin with a connective ('因为…', '最后…') and does not complete a
    dependent phrase ('根据《…法》，…') starts a new unit when it is
    strongly of another category than the unit so far, or when it names its
    own subject ('笔记本电脑在购买后…') after a unit that is already complete.
    """
    units: list[_Unit] = []
    seen_clauses: set[str] = set()
    for sentence in split_sentences(text)[:MAX_SENTENCES]:
        asked = sentence.rstrip("”」』’\"").endswith(("？", "?"))
        if is_english(sentence) and not asked and len(sentence) <= MAX_UNIT_CHARS:
            clauses = [_tidy(sentence)]  # an English sentence is one statement; its commas are grammar
        else:
            clauses = [_tidy(c) for c in split_clauses(sentence)]
        clauses = [c for c in clauses if c]
        groups: list[tuple[list[str], str | None]] = []
        for index, clause in enumerate(clauses):
            if is_question(clause) or is_chitchat(clause) or (asked and index == len(clauses) - 1):
                continue
            key = content_key(clause)
            if key in seen_clauses:  # repeated or pasted-twice text
                continue
            seen_clauses.add(key)
            scores = _score(clause)
            best = scores.ranked()[0]
            best = best if scores.points[best] and scores.decisive(best) else None
            if asked and best is None:
                continue
            if is_english(clause):
                groups.append(([clause], best))
                continue
            if groups:
                members, category = groups[-1]
                too_long = sum(len(m) for m in members) + len(clause) > MAX_UNIT_CHARS
                switches = best is not None and category is not None and best != category
                stands_alone = (
                    best is not None
                    and bool(lexicon.SUBJECT_RE.match(clause))
                    and sum(len(m) for m in members) >= 12
                    and len(clause) >= 8
                )
                bound = bool(
                    _CONNECTIVE_RE.match(clause)
                    or _DEPENDENT_RE.match(members[-1])
                    or len(clause) < 8  # '我录音了' is too short to stand alone
                )
                if not too_long and not ((switches or stands_alone) and not bound):
                    members.append(clause)
                    if category is None:
                        groups[-1] = (members, best)
                    continue
            groups.append(([clause], best))
        units.extend(
            _Unit(("，" if not is_english(members[0]) else ", ").join(members), asked) for members, _ in groups
        )
    return units


# --- rewriting into self-contained notes ------------------------------------------------

_QUOTED_RE = re.compile(r"“[^”]*”|「[^」]*」|『[^』]*』|\"[^\"]*\"")
_USER_PRONOUNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"我们公司|我们单位|我司|我单位", "用户所在单位"),
        (r"我们家|我家", "用户家"),
        (r"我们|咱们|我方", "用户一方"),
        (r"本人", "用户"),
        (r"我(?![国院])", "用户"),
        (r"咱", "用户"),
        (r"你们|您们|[你您]", "助手"),
    )
)
_ASSISTANT_PRONOUNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"你们|您们", "用户一方"),
        (r"[你您]", "用户"),
        (r"我们|我(?![国院])", "助手"),
    )
)
_SUBJECTLESS_RE = re.compile(
    r"(?:已经|已|刚|曾经|曾|一直|也|都)?(?:买|购买|下单|支付|付|花|交|缴|租|签|入职|离职|加班|报名|上了|收到|"
    r"联系|打了|找了|去了|保存|保留|留有|拍|录|截|要求|想|希望|打算|准备|计划|申请|投诉|起诉|咨询|喜欢|偏好|习惯|倾向|不喜欢|不希望)"
)


def _third_person(text: str, speaker: str) -> str:
    """Rewrite pronouns outside quotes: the user's "我" becomes "用户", the assistant's "您" too."""
    rules = _USER_PRONOUNS if speaker == "user" else _ASSISTANT_PRONOUNS
    out: list[str] = []
    last = 0
    for match in _QUOTED_RE.finditer(text):
        out.append(_apply(rules, text[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_apply(rules, text[last:]))
    return "".join(out).replace("用户用户", "用户")


def _apply(rules: tuple[tuple[re.Pattern[str], str], ...], text: str) -> str:
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text


def _with_subject(text: str, category: str, speaker: str) -> str:
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


def _finish(text: str) -> str:
    """End a note with a full stop, cut to the content limit."""
    text = text.strip()[: MAX_CONTENT_CHARS - 1]
    if text.endswith("！"):
        text = text[:-1]
    if text.count("“") > text.count("”"):  # a quote cut off by the split
        text += "”"
    if not text.endswith(("。", "”", "」", "』")):
        text += "。"
    return text


# --- the engine ---------------------------------------------------------------------------

#: Confidence of a note that reports what a person said ("Caroline said they …"): the words
#: are theirs, only the pronouns were rewritten, so it clears the ADD bar (> 0.7); what the
#: rules could not tell is the category, which is why its importance is low.
SAID_CONFIDENCE = 0.75
#: Importance of a reported statement the rules could not classify.
SAID_IMPORTANCE = 0.3
#: A classified statement at or below this confidence is kept as what was said instead:
#: routing would drop it as low quality, and its words are certain even if its category is not.
WEAK_CONFIDENCE = 0.7
#: Speaker labels that mean the product's assistant rather than a person.
ASSISTANT_NAMES = frozenset({"", "assistant", "ai", "bot", "system", "助手"})
SAID_TAG_ZH = "原话"
SAID_TAG_EN = "said"
_MIN_SAID_WORDS = 2


@dataclass(frozen=True)
class _Voice:
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


def _voices(user_name: str, reply_name: str) -> tuple[_Voice, _Voice]:
    user_name = (user_name or "").strip()
    reply_name = (reply_name or "").strip()
    reply_is_person = reply_name.lower() not in ASSISTANT_NAMES
    user = _Voice("user", user_name, reply_name if reply_is_person else "the assistant", True)
    reply = _Voice("assistant", reply_name if reply_is_person else "the assistant", user_name or "the user", reply_is_person)
    return user, reply


def _english_name(voice: _Voice) -> str:
    return voice.name or ("The user" if voice.speaker == "user" else "The assistant")


def _chinese_name(voice: _Voice) -> str:
    return voice.name or ("用户" if voice.speaker == "user" else "助手")


def _third_person_zh(text: str, voice: _Voice) -> str:
    """Chinese pronouns for this voice: the user's "我" is "用户" (as in every Chinese note);
    a named second speaker's "我" is their name and their "你" is the user."""
    if voice.speaker == "user" or not voice.person:
        return _third_person(text, voice.speaker)
    rules = (
        (re.compile(r"我们|咱们"), f"{voice.name}一方"),
        (re.compile(r"我(?![国院])"), voice.name),
        (re.compile(r"你们|您们|[你您]"), voice.other if voice.other != "the user" else "用户"),
    )
    out: list[str] = []
    last = 0
    for match in _QUOTED_RE.finditer(text):
        out.append(_apply(rules, text[last : match.start()]))
        out.append(match.group(0))
        last = match.end()
    out.append(_apply(rules, text[last:]))
    return "".join(out)


def _with_resolved_dates(text: str, said_on: date | None) -> tuple[str, list[str]]:
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


def _with_resolved_chinese_dates(text: str, dates: list[str], said_on: date | None) -> tuple[str, list[str]]:
    """Chinese relative dates resolved against the day said, written beside the phrase
    ("昨天（2023年5月7日）"); returns the text and the dates (resolved where possible)."""
    resolved_dates: dict[str, None] = {}
    for phrase in dates:
        resolved = resolve_zh(phrase, said_on)
        if resolved and resolved != phrase and phrase in text:
            text = text.replace(phrase, f"{phrase}（{resolved}）", 1)
        resolved_dates.setdefault(resolved or phrase, None)
    return text, list(resolved_dates)


def _english_tags(category: Category, dates: list[str], amounts: list[str], *extra: str) -> list[str]:
    tags = [category.slug, *extra]
    if dates:
        tags.append("timeline")
    if amounts:
        tags.append("amount")
    return tags


_ENGLISH_LABELS: dict[str, str] = {
    lexicon.FACT: "Fact", lexicon.EVIDENCE: "Evidence", lexicon.LAW: "Legal basis",
    lexicon.CLAIM: "Claim", lexicon.PREFERENCE: "Preference", lexicon.ACTION: "Advice",
}


def english_context(item: ExtractedItem) -> str:
    """One English sentence saying what a note is about ('Event about support and group')."""
    label = _ENGLISH_LABELS.get(item.category, "Note")
    if item.category == lexicon.FACT and item.memory_type == "event":
        label = "Event"
    if SAID_TAG_EN in item.tags:
        label = "Statement"
    subjects = item.keywords[:2]
    if subjects:
        return f"{label} about {' and '.join(subjects)}"
    return f"{label} mentioned in the conversation"


@dataclass
class _Candidate:
    item: ExtractedItem
    position: int
    voice: _Voice
    text: str = ""


def _confidence(
    scores: _Scores, category: str, runner_up: int, *, asked: bool, speaker: str, correction: bool = False
) -> float:
    """Confidence by rule strength: a strong cue with a date, amount or statute
    ≥ 0.8, two strong cues 0.8, one 0.72, a date / amount / statute alone 0.75, weak
    cues only 0.6–0.65; lowered when another category scores as high, for statements
    inside a question and for the assistant's words; raised for an explicit correction."""
    n_strong = scores.strong[category]
    entity = bool(scores.dates or scores.amounts or scores.law_refs)
    if n_strong and entity:
        value = 0.8 + 0.05 * min(n_strong - 1, 2)
    elif n_strong >= 2:
        value = 0.8
    elif n_strong == 1:
        value = 0.72
    elif entity:
        value = 0.75  # a concrete date, amount or statute is worth keeping (ADD needs > 0.7)
    else:
        value = 0.65 if scores.points[category] >= 4 else 0.6
    if runner_up >= scores.points[category]:
        value -= 0.05
    if asked:
        value -= 0.05
    if speaker == "assistant":
        value -= 0.05
    if correction:
        value += 0.1  # "之前说错了，应该是…": the user corrects a stored fact; it must win the UPDATE
    return round(min(max(value, 0.3), 0.95), 2)


def _candidate(
    unit: _Unit, voice: _Voice, position: int, turn_topic: str | None, said_on: date | None
) -> _Candidate | None:
    """Turn one unit into a scored item, or None when the rules cannot tell what it is."""
    if len(unit.text) < MIN_UNIT_CHARS or not (_CJK_RE.search(unit.text) or _LATIN_WORD_RE.search(unit.text)):
        return None
    scores = _score(unit.text)
    allowed = None if voice.person else REPLY_CATEGORIES
    ranked = scores.ranked(allowed)
    category = ranked[0]
    points = scores.points[category]
    if points < 2 or (not voice.person and not scores.strong[category]):
        return None
    if not scores.decisive(category) and points < 3 and not (scores.dates or scores.amounts):
        return None
    others = [scores.points[c] for c in scores.ranked() if c != category]
    cat = Category(category)
    english = is_english(unit.text)
    if english:
        content = english_rewrite.in_third_person(
            unit.text, _english_name(voice), voice.other, person=voice.person
        )
        if not voice.person and cat is Category.ACTION and not re.search(r"recommend|suggest|advise", content, re.I):
            content = "The assistant advised: " + content
        content, dates = _with_resolved_dates(content, said_on)
        content = _finish_english(content)
    else:
        content = _finish(_with_subject(_third_person_zh(unit.text, voice), category, voice.speaker))
        content, dates = _with_resolved_chinese_dates(content, scores.dates, said_on)
    scope = default_scope(cat)
    if voice.person and voice.speaker != "user" and scope == "user_profile":
        scope = "case"  # a second speaker's taste is not the user's profile
    item = ExtractedItem(
        content=content,
        category=cat.value,
        memory_type=default_memory_type(cat, dates),
        confidence=_confidence(
            scores, category, max(others, default=0), asked=unit.from_question,
            speaker="user" if voice.person else "assistant",
            correction=bool(lexicon.CORRECTION_RE.search(unit.text)),
        ),
        keywords=[],
        tags=[],
        context="",
        importance=importance_for(cat, dates, scores.amounts, scores.law_refs),
        scope_hint=scope,
        dates=dates,
        amounts=scores.amounts,
        speaker=voice.speaker,
    )
    if english:
        item.tags = _english_tags(cat, dates, scores.amounts)
        if cat is Category.PREFERENCE and english_cues.ANSWER_STYLE_RE.search(unit.text):
            item.tags.append("answer style")
    else:
        topic = None if cat is Category.PREFERENCE else lexicon.topic_for(unit.text, turn_topic)
        item.tags = item_tags(cat, topic, dates, scores.amounts)
        if cat is Category.PREFERENCE and lexicon.ANSWER_STYLE_RE.search(unit.text):
            item.tags.append("回答方式")
    return _Candidate(item, position, voice, unit.text)


def _finish_english(text: str) -> str:
    """End with a full stop, cut to the content limit (names keep their case: 'alice')."""
    text = text.strip()[: MAX_CONTENT_CHARS - 1]
    if not text.endswith((".", "!", "?", '"', "”")):
        text += "."
    return text


def _worth_keeping(text: str) -> bool:
    """More than small talk: two content words in English, five characters in Chinese."""
    if _CJK_RE.search(text):
        return len(_CJK_RE.findall(text)) >= MIN_UNIT_CHARS - 1
    words = re.findall(r"[A-Za-z][A-Za-z'-]{2,29}", text)
    content_words = [w for w in words if w.lower() not in english_stopwords.STOPWORDS]
    return len(content_words) >= _MIN_SAID_WORDS


def _said_item(texts: list[str], voice: _Voice, said_on: date | None) -> ExtractedItem | None:
    """What a person said that the rules could not classify, kept as one low-importance event
    in the third person: "Caroline said they …", "alice说：用户……"."""
    texts = [t for t in texts if _worth_keeping(t)]
    if not texts:
        return None
    if any(_CJK_RE.search(t) for t in texts):
        bodies = [_TRAILING_PUNCT_RE.sub("", _third_person_zh(t, voice)) for t in texts]
        content = _finish(f"{_chinese_name(voice)}说：" + "；".join(bodies))
        content, dates = _with_resolved_chinese_dates(content, lexicon.extract_dates(content), said_on)
        tags = item_tags(Category.FACT, None, dates, lexicon.extract_amounts(content)) + [SAID_TAG_ZH]
    else:
        name = _english_name(voice)
        bodies = [english_rewrite.reported(t, name, voice.other) for t in texts]
        body = bodies[0] + "".join("; " + b[len(name) + len(" said ") :] for b in bodies[1:])
        content, dates = _with_resolved_dates(_TRAILING_PUNCT_RE.sub("", body), said_on)
        content = _finish_english(content)
        tags = _english_tags(Category.FACT, dates, lexicon.extract_amounts(content), SAID_TAG_EN)
    amounts = lexicon.extract_amounts(content)
    return ExtractedItem(
        content=content,
        category=Category.FACT.value,
        memory_type="event",
        confidence=SAID_CONFIDENCE,
        keywords=[],
        tags=tags,
        context="",
        importance=round(SAID_IMPORTANCE + (0.05 if dates else 0.0) + (0.05 if amounts else 0.0), 2),
        scope_hint="case",
        dates=dates,
        amounts=amounts,
        speaker=voice.speaker,
    )


def extract_offline(
    user_msg: str,
    ai_resp: str,
    *,
    user_name: str = "",
    reply_name: str = "",
    said_on: date | None = None,
) -> list[ExtractedItem]:
    """Rule-based knowledge items of one turn, at most five, in the order they were said.

    ``user_name`` / ``reply_name`` are the speakers (a reply by "assistant" or no name is
    the product's assistant; any other name is a second person, as in an imported
    conversation between two people). ``said_on`` is the day the turn was said: English
    relative dates ("yesterday", "last Tuesday") are resolved against it.

    Nothing a person says is lost: what the lexicon classifies becomes a categorised
    note; what it cannot (or only weakly) classify becomes one low-importance event in
    the third person ("Caroline said they …"). Trivial turns, questions, greetings and
    thanks give nothing; the assistant's reply only gives statutes and advice. When a
    turn holds more than five pieces, the user's statements win, higher confidence wins
    within each side, and a person's statements that do not fit are folded into that
    person's reported-speech note rather than dropped.
    """
    user_msg = user_msg if isinstance(user_msg, str) else ""
    ai_resp = ai_resp if isinstance(ai_resp, str) else ""
    if is_trivial_turn(user_msg, ai_resp):
        return []
    user_text = clean_text(user_msg[:MAX_INPUT_CHARS], keep_newlines=True)
    reply_text = clean_text(ai_resp[:MAX_INPUT_CHARS], keep_newlines=True)
    turn_topic = lexicon.detect_topic(user_text) or lexicon.detect_topic(reply_text)
    user_voice, reply_voice = _voices(user_name, reply_name)

    candidates: list[_Candidate] = []
    said: dict[_Voice, list[tuple[int, str]]] = {user_voice: [], reply_voice: []}
    seen: set[str] = set()
    position = 0
    for voice, text in ((user_voice, user_text), (reply_voice, reply_text)):
        taken = 0
        for unit in _units(text):
            position += 1
            candidate = _candidate(unit, voice, position, turn_topic, said_on)
            if candidate is None or (voice.person and candidate.item.confidence <= WEAK_CONFIDENCE):
                if voice.person and not unit.from_question:
                    said[voice].append((position, unit.text))
                continue
            key = content_key(candidate.item.content)
            if key in seen:
                continue
            seen.add(key)
            candidates.append(candidate)
            taken += 1
        if not voice.person and taken > MAX_REPLY_ITEMS:
            reply = sorted(
                (c for c in candidates if c.voice is voice),
                key=lambda c: (-c.item.confidence, c.position),
            )[:MAX_REPLY_ITEMS]
            candidates = [c for c in candidates if c.voice is not voice] + reply

    # The user's own statements come first; the reply only fills free slots.
    best = sorted(
        candidates,
        key=lambda c: (c.item.speaker != "user", -c.item.confidence, -c.item.importance, c.position),
    )
    said_items = _fit(best, said, said_on)
    chosen = sorted(
        [(c.position, c.item) for c in best] + said_items, key=lambda pair: pair[0]
    )
    items = [item for _, item in chosen]
    for item in items:
        item.keywords = lexicon.keywords_for(item.content)
        item.context = english_context(item) if is_english(item.content) else lexicon.context_for(item)
    return items


def _fit(
    best: list[_Candidate], said: dict[_Voice, list[tuple[int, str]]], said_on: date | None
) -> list[tuple[int, ExtractedItem]]:
    """Trim ``best`` (in place) so that it and one reported-speech item per speaker fit in
    five; a person's statements that do not fit join that speaker's reported item."""
    while True:
        said_items = {
            voice: item for voice, texts in said.items()
            if texts and (item := _said_item([t for _, t in sorted(texts)], voice, said_on)) is not None
        }
        limit = MAX_ITEMS_PER_TURN - len(said_items)
        overflow = best[limit:]
        if not overflow:
            break
        del best[limit:]
        for candidate in overflow:
            if candidate.voice.person:
                said[candidate.voice].append((candidate.position, candidate.text))
    return [(min(p for p, _ in said[voice]), item) for voice, item in said_items.items()]
