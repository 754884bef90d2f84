"""How people say they are correcting what they said before: "更正一下", "我上次说错了",
"不是10万元，是12万元", "actually", "I meant", "not 3 but 4".

One lexicon for both paths: the write path's routing reads it to supersede the note a
correction replaces (``remember.routing.slots``), the read path to rank, for a question asking
for the first version given, the statement a correction replaced right above the correction
(``recall.fusion.lift_earlier_statements``). docs/routing.md, "The rules"; docs/evaluation.md, "History".
The offline engine's sentence classifier keeps its own narrower Chinese cue
(``remember.extraction.lexicon.CORRECTION_RE``): widening it would change the notes it writes.
"""
from __future__ import annotations

import re

#: The words that say a statement corrects an earlier one.
CORRECTION_CUE_RE = re.compile(
    r"之前(?:说|算|记|搞|写|看|弄|填|打|听)错了?|(?:说|算|记|搞|写|看|弄|填|打|听)错了?|更正(?:一下)?|纠正|改正|其实|实际上|事实上|准确地说|确切地说"
    r"|应该是|改为|改成|变更为|调整为|更改为|修改为|推迟到|延期到|提前到"
    r"|\bactually\b|\bin fact\b|\bcorrection\b|\bto be precise\b|\bi meant?\b|\bi miscalculated\b"
    r"|\bmy mistake\b|\bsorry\b|\bmis-?(?:spoke|stated|typed|remembered)\b|\bgot (?:that|it|this) wrong\b"
    r"|\blet me correct\b|\bscratch that\b|\b(?:changed|moved|rescheduled|postponed|updated|revised|corrected) to\b"
    r"|\bhas been (?:changed|moved|rescheduled|postponed)\b",
    re.IGNORECASE,
)
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
