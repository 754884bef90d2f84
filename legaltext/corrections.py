"""How people say they are correcting what they said before: "更正一下", "我上次说错了",
"不是10万元，是12万元", "押金是3000不是2000", "actually it was", "I meant", "correction:".

Two degrees of one lexicon: ``CORRECTION_CUE_RE`` is every word that may say a statement
corrects an earlier one (routing supersedes with it, the read path ranks the statement a
correction replaced with it); ``CORRECTION_RE`` is the narrower Chinese cue by which the offline
engine calls a sentence a correction (widening it would change the notes it writes). The
reader's ``corrections`` find the cue and, when stated, the new and the rejected value.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from .numbers import amount_value

#: The words that say a statement corrects an earlier one.
CORRECTION_CUE_RE = re.compile(
    r"之前(?:说|算|记|搞|写|看|弄|填|打|听|抄)错了?|(?:说|算|记|搞|写|看|弄|填|打|听|抄)错了?|更正(?:一下)?|纠正|改正|其实|实际上|事实上|准确地说|确切地说"
    r"|应该是|改为|改成|改到|变更为|调整为|更改为|修改为|推迟到|延期到|提前到"
    r"|(?:说|看|写|记|填)反了|打成了|写串了|记成了|(?:哦|噢|啊|呃)[，,]?不对|(?:^|(?<=[。！？!?\s]))不对[，,]"
    r"|\bactually\b|\bin fact\b|\bcorrection\b|\bto be precise\b|\bi meant?\b|\bi miscalculated\b"
    r"|\bmy mistake\b|\bsorry\b|\bmis-?(?:spoke|stated|typed|remembered)\b|\bgot (?:that|it|this|the \w+) wrong\b"
    r"|\btyped an? \S+ instead of\b"
    r"|\blet me correct\b|\bscratch that\b|\b(?:changed|moved|rescheduled|postponed|updated|revised|corrected) to\b"
    r"|\bhas been (?:changed|moved|rescheduled|postponed)\b",
    re.IGNORECASE,
)
#: The offline engine's sentence cue: the user correcting an earlier statement ("之前说错了",
#: "更正一下", "实际上是", "应该是").
CORRECTION_RE = re.compile(r"说错|更正|纠正|改正|实际上是|其实是|应该是|准确地说|不是.{1,12}而是")
# "不是X，而是Y" / "not X but Y" / "Y, not X": X is the value being rejected.
_CLAUSE_CHAR = r"(?:[^，,。；;.]|(?<=\d)[,.](?=\d))"  # a number's "," or "." does not end the clause
#: The value a correction rejects ("不是X，而是Y": X).
REJECTED_VALUE_RE = re.compile(
    r"不是[^，,。；;而]{1,24}?[，,]?\s*而是|[，,]\s*(?:而)?不是" + _CLAUSE_CHAR + r"{1,24}(?=[。；;.]|$)"
    r"|\bnot\s+" + _CLAUSE_CHAR + r"{1,24}?\s+but\b|,\s*not\s+" + _CLAUSE_CHAR + r"{1,24}?(?=[.;]|$)"
    r"|\brather than\s+" + _CLAUSE_CHAR + r"{1,24}",
    re.IGNORECASE,
)


def says_it_corrects(text: str) -> bool:
    """Whether ``text`` says it corrects something said before (a cue word or a rejected value)."""
    return bool(text) and bool(CORRECTION_CUE_RE.search(text) or REJECTED_VALUE_RE.search(text))


# --- the reader's corrections --------------------------------------------------------------

#: Cues that by themselves say the speaker corrects an earlier statement (not "其实", "sorry").
_STRONG_CUE_RE = re.compile(
    r"(?:刚才|之前|上次|前面|我)?(?:说|算|记|写|填|打|抄)错了?|更正(?:一下)?|纠正(?:一下)?|改正"
    r"|\bcorrection\b\s*:?|\bi meant\b|\bactually,?\s+(?:it|that|the \w+)\s+(?:was|is)\b|\bmy mistake\b"
    r"|\blet me correct\b|\bscratch that\b|\bmis-?(?:spoke|stated|typed|remembered)\b",
    re.IGNORECASE,
)
_VALUE = r"[^，,。；;！!？?\s不而]{1,24}?"
# "8,500" is one word; a word is bounded so a long unspaced (Chinese) text never backtracks
_EN_WORD = r"(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|[^,.;!?\s，。；！？]{1,40})"
_EN_VALUE = _EN_WORD + r"(?:\s" + _EN_WORD + r"){0,3}?"
#: Patterns that state the new and the old value.
_VALUE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"不是\s*(?P<old>" + _VALUE + r")\s*[，,]?\s*(?:而)?是\s*(?P<new>" + _VALUE + r")(?=[，,。；;！!？?：:\s]|$)"),
    re.compile(r"(?:是|为)\s*(?P<new>" + _VALUE + r")\s*[，,]?\s*(?:而)?不是\s*(?P<old>" + _VALUE + r")(?=[，,。；;！!？?：:\s]|$)"),
    # "上次说医疗费23600元，我把发票又加了一遍，其实是25180元": the earlier value recalled, then replaced
    re.compile(r"(?:上次|之前|刚才|前面|那天)(?:说|讲|提到|算)的?\s*(?P<old>" + _VALUE + r")[，,][^。！!？?]{0,30}?"
               r"(?:其实|实际上|实际)(?:是|为)\s*(?P<new>" + _VALUE + r")(?=[，,。；;！!？?：:\s]|$)"),
    # "之前说的117600元不对", "刚才说128000元说错了": the value named wrong
    re.compile(r"(?:之前|上次|刚才|前面)(?:说|讲|写|记)的?\s*(?P<old>" + _VALUE + r")\s*(?:不对|有误|说错了|记错了|写错了|错了)"),
    re.compile(r"(?:应该是|实际上是|其实是|改为|改成|更正为|应为)\s*(?P<new>" + _VALUE + r")(?=[，,。；;！!？?：:\s]|$)"),
    # "他已经还了7000元，不是5000元": a statement and the value it is not
    re.compile(r"(?P<new>" + _VALUE + r")\s*[，,]\s*(?:而)?不是\s*(?P<old>" + _VALUE + r")(?=[，,。；;！!？?：:\s]|$)"),
    re.compile(r"\bnot\s+(?P<old>" + _EN_VALUE + r")\s+but\s+(?P<new>" + _EN_VALUE + r")(?=[,.;!?]|\s*$)", re.IGNORECASE),
    re.compile(r"\b(?:was|is|are|were|ends?|ended|starts?|started|runs?|costs?|paid|on|at|until|meant)\s+(?P<new>" + _EN_VALUE
               + r"),?\s+not\s+(?P<old>" + _EN_VALUE + r")(?=[,.;!?]|\s*[\u2014\u2013-]|\s*$)", re.IGNORECASE),
    re.compile(r"(?P<new>" + _EN_VALUE + r")\s+instead of\s+(?P<old>" + _EN_VALUE + r")(?=[,.;!?]|\s*$)", re.IGNORECASE),
    re.compile(r"\b(?:i meant|actually,?\s+(?:it|that|the \w+)\s+(?:was|is)|correction:?\s+(?:it|that|the \w+)\s+(?:was|is)|should be)"
               r"\s+(?P<new>" + _EN_VALUE + r")(?=[,.;!?]|\s*$)", re.IGNORECASE),
)


@dataclass(frozen=True)
class Correction:
    """A correction in the text: the span of its cue (or of the values when no cue word is
    said: "是3000不是2000"), and the new and rejected values when stated."""

    start: int
    end: int
    text: str
    new: str | None = None
    old: str | None = None

    @property
    def new_value(self) -> Decimal | None:
        return amount_value(self.new) if self.new else None

    @property
    def old_value(self) -> Decimal | None:
        return amount_value(self.old) if self.old else None


#: A word every pattern above needs (a cheap test first: most sentences correct nothing, and the
#: patterns with a value before their anchor cost a scan each).
_ANCHOR_RE = re.compile(
    r"不是|上次|之前|刚才|前面|那天|应该是|实际上是|其实是|改为|改成|更正|应为|纠正|改正|[说算记写填打抄]错"
    r"|\bnot\b|\binstead of\b|\bmeant\b|\bactually\b|\bcorrection\b|\bshould be\b|\bmy mistake\b"
    r"|\blet me correct\b|\bscratch that\b|\bmis-?(?:spoke|stated|typed|remembered)\b",
    re.IGNORECASE,
)


def corrections(text: str) -> list[Correction]:
    """The corrections of ``text``: a strong cue, a stated new / rejected value, or both."""
    if not _ANCHOR_RE.search(text):
        return []
    found: list[Correction] = []
    values = []
    for pattern in _VALUE_PATTERNS:
        for match in pattern.finditer(text):
            if any(match.start() < b and a < match.end() for a, b, _, _ in values):
                continue
            groups = match.groupdict()
            values.append((match.start(), match.end(), groups.get("new"), groups.get("old")))
    cues = list(_STRONG_CUE_RE.finditer(text))
    for cue in cues:
        value = next((v for v in values if v[0] >= cue.start()), None)
        if value is not None:
            values.remove(value)
        found.append(Correction(cue.start(), cue.end(), cue.group(0), *(value[2:] if value else (None, None))))
    for start, end, new, old in values:
        if old is not None or cues:  # "应该是X" alone is advice, not a correction
            found.append(Correction(start, end, text[start:end], new, old))
    return sorted(found, key=lambda c: c.start)
