"""Whether a recalled item supports a sentence of an answer: a first, explainable check.

Each rule is a small named object in ``SUPPORT_RULES``, asked in order; the first that has a
verdict decides (True supports, False refutes, None says nothing). The key values — sums, days,
names, identifiers, statutes — are those ``legaltext`` reads (``legaltext.values.values`` and
``legaltext.read``), never a second regex. No embedding is used yet: the words a sentence shares
with the item stand in for meaning (docs/citations.md, "The support check").
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from legaltext import read
from legaltext.asked import asked_terms
from legaltext.values import Value, values

#: A sentence is supported by an item that holds at least this share of the sentence's words
#: (Chinese character pairs, English words of three letters or more). A first setting, not yet
#: calibrated on an attribution split (docs/citations.md).
SUPPORT_MIN_SHARED_WORDS = 0.3
#: The offline answer says memory holds nothing on a question when no recalled item holds at
#: least this share of the question's words, asking words left out (nor one of its key values):
#: a question is short, so the floor is half a sentence's.
QUESTION_MIN_SHARED_WORDS = 0.15
#: Asking words, left out of a question's words (half of a short question is them).
ASKING_WORDS = frozenset({"怎么", "么办", "什么", "么时", "时候", "如何", "是否", "可以", "哪些", "多少", "为什",
                          "么样", "怎样", "请问", "一下", "应该", "需要", "what", "when", "how", "which", "does",
                          "should", "can", "the", "and", "for"})
#: Value kinds a sentence and its item must not disagree on ("5000元" cited to a note of 6000,
#: "150%" to one of 200%); a bare number of at least ``AMOUNT_MIN`` ("15万", "5,000 units") is
#: read as a sum, since the words around it, not the number, say what it counts.
CONFLICT_KINDS = ("money", "date", "percent")
AMOUNT_MIN = 100
_CJK_RUN_RE = re.compile(r"[\u4e00-\u9fff]+")
_LATIN_WORD_RE = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")


@dataclass(frozen=True)
class KeyValues:
    """What a text states that a lawyer would check against its source."""

    values: tuple[Value, ...]
    names: frozenset[str]  # people and companies as written
    identifiers: frozenset[str]  # case, contract and ID numbers, codes (normalised)
    statutes: frozenset[tuple[str, int | None]]  # (law, article)

    @property
    def states_a_fact(self) -> bool:
        """A sum, a day, a name or an identifier: what needs a source."""
        return bool(self.names or self.identifiers) or any(v.kind in CONFLICT_KINDS for v in self.values)


def law_key(law: str) -> str:
    """A law's name as compared: without 中华人民共和国 / "of the PRC", lower case."""
    law = law.removeprefix("中华人民共和国").strip()
    return re.sub(r"\s+of\s+(?:the\s+)?(?:PRC|People's Republic of China|China)$", "", law).lower()


#: How a bare sum is written: with digits, or numerals with a unit ("一万五"); "三三三" is not.
_WRITTEN_AMOUNT_RE = re.compile(r"\d|[百千万亿]")


def _as_key_value(value: Value, text: str) -> Value | None:
    """A value as the check compares it: a bare number of at least ``AMOUNT_MIN`` written as a sum
    is (not a year: "2020年"; not "三三三"), a small one not at all."""
    if value.kind != "number":
        return value
    if (value.magnitude < AMOUNT_MIN or text[value.end:value.end + 1] == "年"
            or not _WRITTEN_AMOUNT_RE.search(value.text)):
        return None
    return Value(value.start, value.end, value.text, "money", value.magnitude)


@lru_cache(maxsize=1024)
def key_values(text: str) -> KeyValues:
    reading = read(text)
    names = {m.text for m in (*reading.people, *reading.companies)}
    return KeyValues(
        values=tuple(v for v in (_as_key_value(v, text) for v in values(text)) if v is not None),
        names=frozenset(name for name in names if len(name) >= 2),
        identifiers=frozenset(m.value for m in reading.identifiers),
        statutes=frozenset((law_key(s.law), s.article) for s in reading.statutes),
    )


def words(text: str) -> frozenset[str]:
    """Chinese character pairs and English words (lower case) of ``text``."""
    found: set[str] = set()
    for run in _CJK_RUN_RE.findall(text):
        found.update(run[i:i + 2] for i in range(len(run) - 1))
    found.update(word.lower() for word in _LATIN_WORD_RE.findall(text))
    return frozenset(found)


def shared_words(sentence: str, item: str) -> float:
    """The share of the sentence's words the item holds (0 when the sentence has fewer than two)."""
    mine = words(sentence)
    return len(mine & words(item)) / len(mine) if len(mine) >= 2 else 0.0


# --- the rules ----------------------------------------------------------------------------

def _conflicting_value(sentence: str, item: str) -> bool | None:
    """Refutes: the sentence states a sum or a day the item states otherwise."""
    mine, theirs = key_values(sentence).values, key_values(item).values
    for kind in CONFLICT_KINDS:
        said = [v for v in mine if v.kind == kind]
        held = [v for v in theirs if v.kind == kind]
        if said and held and not any(a.matches(b) for a in said for b in held):
            return False
    return None


def _missing_identifier(sentence: str, item: str) -> bool | None:
    """Refutes: the sentence names a case, contract or ID number or a code the item does not
    hold ("00381" cited to a note of "00318")."""
    theirs = key_values(item).identifiers
    return False if key_values(sentence).identifiers - theirs else None


def _shared_key_value(sentence: str, item: str) -> bool | None:
    """Supports: a sum, day, length of time, name or identifier of the sentence is the item's."""
    mine, theirs = key_values(sentence), key_values(item)
    if any(a.matches(b) for a in mine.values for b in theirs.values):
        return True
    if any(name in item for name in mine.names) or mine.identifiers & theirs.identifiers:
        return True
    return None


def _shared_words(sentence: str, item: str) -> bool | None:
    """Supports: the item holds enough of the sentence's words (``SUPPORT_MIN_SHARED_WORDS``)."""
    return True if shared_words(sentence, item) >= SUPPORT_MIN_SHARED_WORDS else None


@dataclass(frozen=True)
class SupportRule:
    name: str
    verdict: Callable[[str, str], bool | None]


SUPPORT_RULES: tuple[SupportRule, ...] = (
    SupportRule("conflicting_value", _conflicting_value),
    SupportRule("missing_identifier", _missing_identifier),
    SupportRule("shared_key_value", _shared_key_value),
    SupportRule("shared_words", _shared_words),
)


def supports(sentence: str, item: str) -> tuple[bool, str]:
    """Whether ``item`` supports ``sentence``, and the rule that decided ("none": no rule had a verdict)."""
    for rule in SUPPORT_RULES:
        verdict = rule.verdict(sentence, item)
        if verdict is not None:
            return verdict, rule.name
    return False, "none"


def restates(sentence: str, question: str) -> bool:
    """Whether the user's own question already states the sentence's fact (what the user just
    said is no invention): a sum, day, name or identifier of the sentence is the question's, and
    none conflicts. Shared words alone are not: "What is the monthly rent?" states no rent."""
    return _conflicting_value(sentence, question) is None and bool(_shared_key_value(sentence, question))


def statute_found(law: str, article: int | None, texts: list[str]) -> bool:
    """Whether a citation of ``law`` (article ``article``) is held by one of ``texts``: the same
    law, and the same article when one is cited."""
    key = law_key(law)
    for text in texts:
        for held_law, held_article in key_values(text).statutes:
            if held_law == key and (article is None or held_article == article):
                return True
    return False


def bearing(question: str, item: str) -> float:
    """How much a recalled item bears on a question, 0…1: 0 when the question asks about a thing
    the item never names (``legaltext.asked``: "林晓雯的车牌号是多少？", "有没有行车记录仪视频？"), 1 for a
    shared key value, else the share of the question's words (asking words left out) that the
    item holds."""
    asked = asked_terms(question)
    if asked is not None and not all(term in item.lower() for term in asked[0]):
        return 0.0  # "林晓雯的车牌号是多少？": a memory that never names 车牌 does not answer it
    if _shared_key_value(question, item):
        return 1.0
    asked = words(question) - ASKING_WORDS
    return len(asked & words(item)) / len(asked) if asked else 0.0


def bears_on(question: str, item: str) -> bool:
    """Whether a recalled item bears on a question at all: its ``bearing`` reaches
    ``QUESTION_MIN_SHARED_WORDS``. Below it a recall is a weak match."""
    return bearing(question, item) >= QUESTION_MIN_SHARED_WORDS
