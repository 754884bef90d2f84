"""Scoring text against the category lexicons, and grouping a message's clauses into
units: the pieces of text that may each become one note."""

from __future__ import annotations

from dataclasses import dataclass, replace

from legaltext.acts import act_of
from legaltext.sentences import ARTICLE_START_RE, CONTINUATION_RE, refers_back

from .. import lexicon
from ..english import cues as english_cues
from ..items import content_key
from .wording import year_said
from .text import (
    CJK_RE,
    CONNECTIVE_RE,
    DEPENDENT_RE,
    TIME_CLAUSE_END_RE,
    PREDICATE_FIRST_RE,
    CONDITION_END_RE,
    LATIN_WORD_RE,
    is_chitchat,
    is_english,
    is_question,
    split_clauses,
    split_sentences,
    tidy,
)

#: Sentences examined per side; a turn that long is a pasted document.
MAX_SENTENCES = 400
#: Longest piece of text that can become one note; longer runs without
#: punctuation are pasted material, not a statement.
MAX_UNIT_CHARS = 300


# --- scoring --------------------------------------------------------------------------


@dataclass
class Scores:
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


def score(text: str) -> Scores:
    points = {c: 0 for c in lexicon.CATEGORY_PRIORITY}
    strong = {c: 0 for c in lexicon.CATEGORY_PRIORITY}
    tables = [lexicon.CATEGORY_CUES] if CJK_RE.search(text) else []
    if LATIN_WORD_RE.search(text):
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
    return Scores(points, strong, dates, amounts, lexicon.extract_law_refs(text))


# --- units: the pieces of text that may become notes ---------------------------------


@dataclass
class Unit:
    text: str
    from_question: bool
    #: The year the sentence before said ("去年", "2025"), for a month and day said without one:
    #: "第一次是去年3月15日转的3000；第二次是3月20日又转了3000" is 2025年3月20日.
    year_before: str | None = None


def units_of(text: str, *, whole_sentences: bool = False) -> list[Unit]:
    """Group each sentence's kept clauses into units of one category.

    Questions and chit-chat clauses are dropped. In a sentence that ends with
    a question mark its last clause is the question, and the other clauses
    stay only when they carry a strong cue or an entity. A clause that does
    not begin with a connective ('因为…', '最后…') and does not complete a
    dependent phrase ('根据《…法》，…') starts a new unit when it is
    strongly of another category than the unit so far, or when it names its
    own subject ('笔记本电脑在购买后…') after a unit that is already complete. A statute's
    clauses stay together to the sentence's end: "…的，后履行一方有权拒绝…" is the rule itself.
    A sentence that points back at the one before ("诉讼时效从此中断…", "If it cannot prove
    both, …": ``legaltext.sentences.refers_back``) joins that sentence's last unit.
    With ``whole_sentences`` (the assistant's reply) each sentence is one unit: a clause of advice
    is never filed without the condition or subject said before it.
    """
    units: list[Unit] = []
    glue_to: Unit | None = None  # the last unit, while the sentence before gave it
    year_before: str | None = None
    seen_clauses: set[str] = set()
    for sentence in split_sentences(text)[:MAX_SENTENCES]:
        asked = sentence.rstrip("”」』’\"").endswith(("？", "?"))
        if is_english(sentence) and not asked and len(sentence) <= MAX_UNIT_CHARS:
            clauses = [tidy(sentence)]  # an English sentence is one statement; its commas are grammar
        else:
            clauses = [tidy(c) for c in split_clauses(sentence)]
        clauses = [c for c in clauses if c]
        corrects = act_of(sentence) == "correction"  # "…记错了，应该是X，不是Y" is one statement
        groups: list[tuple[list[str], str | None]] = []
        for index, clause in enumerate(clauses):
            if is_question(clause) or is_chitchat(clause) or (asked and index == len(clauses) - 1):
                continue
            key = content_key(clause)
            if key in seen_clauses:  # repeated or pasted-twice text
                continue
            seen_clauses.add(key)
            scores = score(clause)
            best = scores.ranked()[0]
            best = best if scores.points[best] and scores.decisive(best) else None
            if asked and best is None:
                continue
            if is_english(clause) and LATIN_WORD_RE.search(clause):  # "2500" alone is no English sentence
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
                    CONNECTIVE_RE.match(clause)
                    or DEPENDENT_RE.match(members[-1])
                    or TIME_CLAUSE_END_RE.search(members[-1])  # "律师函寄出去以后，房东又转了2000"
                    or PREDICATE_FIRST_RE.match(clause)  # "…未超过13.4%，受法律保护"
                    or CONDITION_END_RE.search(members[-1])  # "收受定金的一方不履行债务的，应当双倍返还"
                    or len(clause) < 8  # '我录音了' is too short to stand alone
                    or category == lexicon.LAW  # a statute's words run to its sentence's end
                    or bool(ARTICLE_START_RE.match(members[0]))  # so do an article's ("第八条 …，不属于…")
                    or bool(CONTINUATION_RE.match(clause))  # a negating tail or a proviso ("但…除外")
                    or refers_back(clause)  # "…认可了这笔债务，诉讼时效从此中断"
                    or corrects
                )
                if not too_long and (whole_sentences or not ((switches or stands_alone) and not bound)):
                    members.append(clause)
                    if category is None:
                        groups[-1] = (members, best)
                    continue
            groups.append(([clause], best))
        sentence_units = [
            Unit(("，" if not is_english(members[0]) else ", ").join(members), asked, year_before)
            for members, _ in groups
        ]
        year_before = year_said(sentence)
        if sentence_units and units and glue_to is units[-1] and refers_back(sentence_units[0].text) \
                and len(units[-1].text) + len(sentence_units[0].text) < MAX_UNIT_CHARS:
            first = sentence_units.pop(0)
            stop = ". " if is_english(units[-1].text) else "。"
            units[-1] = replace(units[-1], text=f"{units[-1].text}{stop}{first.text}")
        units.extend(sentence_units)
        glue_to = units[-1] if groups else None
    return units

