"""Reading a message: sentences and clauses, and what is not a statement (questions,
small talk, list markers, fillers), in Chinese and English."""

from __future__ import annotations

import re

from legaltext.acts import ZH_QUESTION_RE
from legaltext.sentences import clauses, sentence_offsets

from ..english import cues as english_cues
from ..quoting import close_and_reopen, outside_quotes


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text``: split at 。！？；… and their ASCII forms and at newlines, short quotes
    kept whole; a sentence inside a longer quote is closed and reopened as a quote of its own
    (``quoting.close_and_reopen``), so it is never rewritten as the speaker's own words."""
    return close_and_reopen(text, sentence_offsets(text))


def split_clauses(sentence: str) -> list[str]:
    """Comma-separated clauses of a sentence, ignoring commas inside quotes and numbers."""
    return clauses(sentence)


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
TRAILING_PUNCT_RE = re.compile(r"[，,、；;：:。.！!？?…‼⁉\s]+$")

_CHITCHAT_RE = re.compile(
    r"^(?:(?:[\u4e00-\u9fff]{0,3}(?:律师|老师|先生|女士|经理))?(?:你好|您好)|哈喽|在吗|谢谢|多谢|感谢|辛苦了|麻烦了|好的?|好吧|行|嗯+|哦+|对|对的|是的|没问题|收到|ok|OK|"
    r"(?:我|那)?(?:明白|知道|懂|清楚)了?)$"
    r"|^(?:谢谢|多谢|感谢)"
    r"|^(?:那|那么|好|好的|行)?(?:请|麻烦|拜托)?(?:你|您)?(?:再|先|能|可以|能否|能不能|帮忙|给)*(?:帮我|帮忙|替我|给我)"
    r"|^(?:我)?(?:想|还想|再)?(?:问|请教|咨询)(?:一下|下|个问题|您|你)"
    # Turning to another subject, or asking to check what was said: they tell nothing themselves.
    r"|^(?:另一件事|另外一件事|还有一件事|还有个事|再说一件事|换个话题)$"
    r"|^(?:我)?(?:想|还想|再)?(?:确认|核实|核对)一下$"
    r"|(?:总结|概括|归纳|整理|解释|分析|梳理|翻译|写|起草|列|说|讲|看|查|算|改|润色|讲解|介绍)(?:一下|一遍|下吧)$"
)
#: Markers of a lasting preference; they keep "以后给我先说结论" from being
#: dropped as a one-off request.
_LASTING_RE = re.compile(r"以后|每次|今后|一般|总是|习惯|喜欢|偏好|倾向")
CONNECTIVE_RE = re.compile(
    r"^(?:因为|由于|所以|因此|导致|结果|但|可是|不过|而且|并且|并|且|还|也|又|再|然后|之后|随后|最后|以及|"
    r"或者|或|及|同时|否则|以免|从而|于是|就|才|都|甚至|包括|比如|例如|即|虽然|尽管|如果|只要)"
)
CJK_RE = re.compile(r"[\u4e00-\u9fff]")
LATIN_WORD_RE = re.compile(r"[A-Za-z]{2,}")
#: A clause opening with these is a dependent phrase ('根据《…法》第…条'); the
#: clause after it belongs to the same note.
DEPENDENT_RE = re.compile(r"^(?:根据|依据|按照|依照|鉴于|如果|若|假如|只要|只有|一旦|除非|即使|即便|无论|不论|不管|虽然|尽管|因为|由于|为了)")
#: A clause opening on its predicate has its subject in the clause before ("…约定的逾期利率未超过
#: 13.4%，受法律保护", "诉讼时效三年，从届满之日起算", "…的，由合同履行地的仲裁委员会管辖"): cut
#: from it, it reads as a rule of nobody (the note-truth readers judged such notes cut).
PREDICATE_FIRST_RE = re.compile(r"^(?:受|从|自(?=[^，,]{0,16}起)|由|要求|可以|可|应当|应|须|需要|约|则|不得|不能|方可|视为|属于|适用|即可)")
#: A clause ending with "的" is a condition ("收受定金的一方不履行债务的，…"): the next clause is its rule.
CONDITION_END_RE = re.compile(r"的$")
#: A clause ending with these is a time adverbial ("律师函寄出去以后"): it says when the next
#: clause happened and tells nothing alone.
TIME_CLAUSE_END_RE = re.compile(r"(?:以后|之后|以前|之前|的时候|期间|(?<![小目提最然随先此])[后前时])$")


_FIRST_LETTER_RE = re.compile(r"[A-Za-z\u4e00-\u9fff]")


def is_english(text: str) -> bool:
    """Text that reads as English (or any Latin-script language): without a Chinese character,
    or an English sentence around a few Chinese words — a company's name in brackets, a term
    like 协商解除 — which opens with a Latin letter and has at least as many Latin words as
    Chinese characters ("合同里有一条rent review的英文条款" is Chinese). Only the speaker's own words
    count: a Chinese sentence quoting an English e-mail is Chinese."""
    own = outside_quotes(text)
    if _FIRST_LETTER_RE.search(own):
        text = own
    chinese = len(CJK_RE.findall(text))
    if not chinese:
        return True
    first = _FIRST_LETTER_RE.search(text)
    return first is not None and first.group(0).isascii() and len(LATIN_WORD_RE.findall(text)) >= max(3, chinese)


def tidy(clause: str) -> str:
    """Remove list markers, inline markdown, leading fillers and trailing particles."""
    text = _INLINE_MARKUP_RE.sub("", _HEADING_RE.sub("", _MARKDOWN_RE.sub("", clause)))
    filler = english_cues.FILLER_RE if is_english(text) else _FILLER_RE
    for _ in range(3):
        stripped = filler.sub("", text, count=1)
        if stripped == text:
            break
        text = stripped
    text = TRAILING_PUNCT_RE.sub("", text)
    return _TRAILING_RE.sub("", text).strip()


def is_question(clause: str) -> bool:
    """A clause asking something ('那我现在该咋办', '这是不是拖时间', 'I wonder if …')."""
    if is_english(clause):
        return bool(english_cues.QUESTION_RE.search(clause.strip()))
    return bool(ZH_QUESTION_RE.search(TRAILING_PUNCT_RE.sub("", clause)))


def is_chitchat(clause: str) -> bool:
    """Greetings, thanks, acknowledgements and one-off requests to the assistant
    ('你再帮我总结一下'); a lasting preference ('以后先给结论') is not chit-chat."""
    if is_english(clause):
        text = TRAILING_PUNCT_RE.sub("", clause.strip())
        if english_cues.LASTING_RE.search(text):
            return False
        return bool(english_cues.CHITCHAT_RE.search(text))
    if _LASTING_RE.search(clause):
        return False
    return bool(_CHITCHAT_RE.search(clause))

