"""Whether a statute an item cites was cited in its turn, and was in force on the day it was said.

A small model answering a tenancy question wrote "《合同法》第四十条…可以撤销合同": a law repealed
when the Civil Code took effect (1 January 2021), cited for what it never said. Stored as a 法条
note, that citation would come back as law. The checks here read only the item and its turn
(no statute corpus): a 法条 item may cite only what its speaker cited, and a citation of a
repealed law is the speaker's statement, never law in force (docs/write-path.md, "Speaker rules").
"""

from __future__ import annotations

from datetime import date

from legaltext.statutes import Citation, citations

#: Laws the Civil Code (《民法典》) replaced on 1 January 2021: name → (successor, day repealed).
CIVIL_CODE_DAY = date(2021, 1, 1)
REPEALED_LAWS: dict[str, tuple[str, date]] = {
    name: ("民法典", CIVIL_CODE_DAY)
    for name in ("合同法", "物权法", "担保法", "婚姻法", "继承法", "收养法", "民法通则", "民法总则", "侵权责任法")
}


def uncited(content: str, said: str) -> Citation | None:
    """A statute ``content`` cites that ``said`` does not: a law its speaker never named, or an
    article of it the speaker did not cite (when the speaker cited articles of that law)."""
    said_citations = citations(said)
    for citation in citations(content):
        same_law = [c for c in said_citations if c.title == citation.title]
        if not same_law:
            return citation
        articles = {c.article for c in same_law if c.article is not None}
        if citation.article is not None and articles and citation.article not in articles:
            return citation
    return None


def repealed(content: str, said_on: date | None) -> tuple[Citation, str, date] | None:
    """A citation in ``content`` of a law repealed before ``said_on`` (today when unknown), with
    the law that replaced it and the day: (《合同法》第40条, '民法典', 2021-01-01)."""
    day = said_on or date.today()
    for citation in citations(content):
        successor = REPEALED_LAWS.get(citation.title)
        if successor and day >= successor[1]:
            return citation, *successor
    return None
