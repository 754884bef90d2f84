"""What a question asks about, as the words a memory must name to answer it (issue 52: "memory
holds nothing" said at the answer). "房东李建国的手机号码是多少？" is answered only by a memory that
names 手机, not by every memory about 李建国; "有没有行车记录仪视频？" only by one naming 行车…视频.

The rules are a table (``ASKED_RULES``), asked in order, the first that reads the question
deciding; a question none reads asks about nothing in particular (its words decide, in
``chat.support.bearing``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from .acts import asked_point
from .words import FUNCTION_CHARS

#: Slots asked with 什么 that a memory states without naming them ("在什么地方签的" is answered
#: by "在苏州签的"): no term is asked of the memory.
_SLOT_WORDS = ("时候", "时间", "地方", "情况", "意思", "事", "特别", "问题", "区别", "关系", "原因", "理由",
               "办法", "影响", "风险", "条件", "手续", "材料", "程序", "要求", "证据", "东西", "内容", "样")

_EXISTS_RE = re.compile(r"(?:有没有|是否有|有无)(?:约定|签过|签|做过|做|留下|留|保留|拍过|拍|录过|提供过|提供|办过|办|"
                        r"买过|买|交过|交|申请过|申请|写过|写|开过|开)?([\u4e00-\u9fff]{2,8}?)"
                        r"(?=怎么|怎样|的时候|吗|呢|[，。？?！!、]|$)")
_WHO_RE = re.compile(r"的([\u4e00-\u9fff]{2,6}?)(?:是谁|是几[\u4e00-\u9fff]|叫什么)")
_WHAT_KIND_RE = re.compile(r"是什么([\u4e00-\u9fff]{2,6}?)(?=和|的|[，。？?！!、]|$)")
_EN_OF_RE = re.compile(r"\b(?:what|who) (?:is|was|are|were) (?:the )?(?:[^?]+?'s ([a-z][a-z ]+?)|"
                       r"([a-z][a-z ]+?) of [^?]+?)\s*\?", re.IGNORECASE)
_EN_STOP = frozenset("the a an of his her their its our my your".split())


def _ends(phrase: str) -> tuple[str, ...]:
    """A Chinese phrase as the words a memory must hold: its first two characters (what kind) and
    its last two (the head noun): "行车记录仪视频" → 行车, 视频; "录音" → 录音."""
    return tuple(dict.fromkeys((phrase[:2], phrase[-2:])))


def _value_of_point(question: str) -> tuple[str, ...] | None:
    point = asked_point(question)
    if point is None:
        return None
    return (point,) if point.isascii() else (point[:2],)


def _whether_it_exists(question: str) -> tuple[str, ...] | None:
    match = _EXISTS_RE.search(question)
    if match is None or set(match.group(1)[:1]) & FUNCTION_CHARS:
        return None
    thing = match.group(1)
    return None if any(thing.startswith(word) for word in _SLOT_WORDS) else _ends(thing)


def _who_or_which(question: str) -> tuple[str, ...] | None:
    match = _WHO_RE.search(question)
    if match is None or set(match.group(1)) & FUNCTION_CHARS:
        return None
    return _ends(match.group(1))


def _what_kind(question: str) -> tuple[str, ...] | None:
    match = _WHAT_KIND_RE.search(question)
    if match is None or any(match.group(1).startswith(word) for word in _SLOT_WORDS):
        return None
    return (match.group(1)[:2],)


def _english_attribute(question: str) -> tuple[str, ...] | None:
    match = _EN_OF_RE.search(question)
    if match is None:
        return None
    words = [w for w in (match.group(1) or match.group(2)).lower().split() if w not in _EN_STOP]
    return (" ".join(words),) if words else None  # the attribute as one phrase: "registered address"


@dataclass(frozen=True)
class AskedRule:
    name: str
    why: str
    terms: Callable[[str], tuple[str, ...] | None]


ASKED_RULES: tuple[AskedRule, ...] = (
    AskedRule("value-of-point", "'林晓雯的车牌号是多少？' asks the value of 车牌号: a memory must name 车牌",
              _value_of_point),
    AskedRule("whether-it-exists", "'有没有行车记录仪视频？' is answered only by a memory naming 行车…视频",
              _whether_it_exists),
    AskedRule("who-or-which", "'公司的装修施工资质是几级？' asks about 资质: a memory must name 装修…资质",
              _who_or_which),
    AskedRule("what-kind", "'我的车是什么品牌？' asks the 品牌: a memory must name it", _what_kind),
    AskedRule("english-attribute", "\"What is X's registered address?\" needs a memory naming a registered address",
              _english_attribute),
)


def asked_terms(question: str) -> tuple[tuple[str, ...], str] | None:
    """The words a memory must hold to answer ``question`` (lower case), and the rule's name; None
    when no rule reads it."""
    for rule in ASKED_RULES:
        terms = rule.terms(question or "")
        if terms:
            return tuple(t.lower() for t in terms), rule.name
    return None
