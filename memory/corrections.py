"""How people say they are correcting what they said before: "更正一下", "我上次说错了",
"不是10万元，是12万元", "actually", "I meant", "not 3 but 4".

The lexicon is read by ``legaltext.corrections`` (one reader for both paths): the write path's
routing reads it to supersede the note a correction replaces (``remember.routing.slots``), the
read path to rank, for a question asking for the first version given, the statement a
correction replaced right above the correction (``recall.fusion.lift_earlier_statements``).
docs/routing.md, "The rules"; docs/evaluation.md, "History". This module keeps the names both
paths import.
"""
from __future__ import annotations

from legaltext.corrections import CORRECTION_CUE_RE, REJECTED_VALUE_RE, says_it_corrects

__all__ = ["CORRECTION_CUE_RE", "REJECTED_VALUE_RE", "says_it_corrects"]
