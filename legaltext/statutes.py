"""Statute citations and contract articles.

'《民法典》第七百三十三条', '劳动合同法第82条' and 'Article 5 of the Labour Contract Law' cite a
law; '第八条' inside a lease, 'Clause 5' or 'Article 8 of the lease' is a term of a contract.
A bare '第八条' names no law: it is a contract article when it is read in a contract (the
reader is told so, or the text speaks of its parties: 甲方, 本合同, the Lessee …), and an
article of an unnamed source otherwise — never a statute.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .dates import NUM, find_all
from .numbers import small_number

#: Not an article of a contract ("合同第八条", "协议第3条", "约定第5条").
NOT_CONTRACT = r"(?<!合同)(?<!协议)(?<!约定)"
_LAW_SUFFIX = r"(?:法|法典|条例|规定|解释|办法|规则|通则)"
#: A statute reference as the offline engine keeps it: a titled law with its article, or a bare
#: article outside a contract's words.
LAW_REF_RE = re.compile(
    r"《[^《》\n]{1,40}" + _LAW_SUFFIX + r"(?:[（(][一二三四五六七八九十\d]{1,3}[）)])?》(?:第" + NUM + r"条(?:第" + NUM + r"款)?)?"
    r"|" + NOT_CONTRACT + r"第" + NUM + r"条(?:第" + NUM + r"款)?"
)
TITLE_RE = re.compile(r"《(?:中华人民共和国)?([^《》\n]{1,40})》")
ARTICLE_RE = re.compile(r"第([0-9０-９一二两三四五六七八九十百千零〇]+)条")


def law_refs(text: str) -> list[str]:
    """Statute references as written: '《消费者权益保护法》第二十四条', '第二十四条'."""
    return find_all(LAW_REF_RE, text)


@dataclass(frozen=True)
class Citation:
    """One statute reference: the law's short title (without 中华人民共和国) and the article, when given."""

    title: str
    article: int | None

    def __str__(self) -> str:
        return f"《{self.title}》" + (f"第{self.article}条" if self.article is not None else "")


def article_number(text: str) -> int | None:
    return small_number(text)


def citations(text: str) -> list[Citation]:
    """The titled statute references in ``text`` ('《民法典》第五百零九条' → 民法典, 509)."""
    found: list[Citation] = []
    for ref in law_refs(text or ""):
        title = TITLE_RE.search(ref)
        if title is None:
            continue  # a bare "第二十四条" names no law to check against
        article = ARTICLE_RE.search(ref[title.end():])
        found.append(Citation(title.group(1), article_number(article.group(1)) if article else None))
    return found


# --- the reader's citations ----------------------------------------------------------------

@dataclass(frozen=True)
class StatuteMention:
    """A law cited in the text, with its span: the law's name and the article, when given."""

    start: int
    end: int
    text: str
    law: str
    article: int | None


@dataclass(frozen=True)
class ArticleMention:
    """An article that names no law ('第八条', 'Clause 5'): a term of a contract when
    ``in_contract``."""

    start: int
    end: int
    text: str
    article: int | None
    in_contract: bool


_TITLED_RE = re.compile(r"《(?:中华人民共和国)?(?P<law>[^《》\n]{1,40})》(?:第(?P<n>" + NUM + r")条(?:第" + NUM + r"款)?)?")
_BARE_LAW_RE = re.compile(r"(?P<law>[\u4e00-\u9fff]{1,14}?(?:法典|法|条例))第(?P<n>" + NUM + r")条(?:第" + NUM + r"款)?")
#: Words before a law's name that are not part of it ("根据劳动合同法…", "违反了民法典…").
_LEAD_RE = re.compile(r"^.*(?:根据|依据|按照|依照|参照|适用|违反了?|对照|按|依|据|和|与|及|或|的|了|是|在|将|由|、)")
_ARTICLE_RE = re.compile(r"第(?P<n>" + NUM + r")条(?:第" + NUM + r"款)?")
_EN_STATUTE_RE = re.compile(
    r"\b(?:Article|Art\.|Section|Sec\.|§)\s*(?P<n>\d+)[a-z]?(?:\(\d+\))*\s+of\s+(?:the\s+)?"
    r"(?P<law>(?:(?:[A-Z][\w'’-]*|and|of|on|for)\s+){0,6}?(?:Law|Code|Act|Regulations?|Ordinance|Interpretation)\b(?:\s+of\s+(?:the\s+)?(?:PRC|People's Republic of China|China))?)"
)
_EN_ARTICLE_RE = re.compile(r"\b(?P<kind>Article|Clause|Section|Art\.)\s*(?P<n>\d+)(?:\.\d+)*(?P<of>\s+of\s+(?:the|this)\s+(?:lease|contract|agreement|tenancy))?",
                            re.IGNORECASE)
#: A text that reads as a contract: its parties and its own name for itself.
CONTRACT_CONTEXT_RE = re.compile(
    r"甲方|乙方|出租方|承租方|出租人|承租人|本合同|本协议|合同|协议|租约|条款"
    r"|条(?:明确|还|也|中|里)?(?:约定|写明|写着)"  # "第十条约定…": what the parties agreed
    r"|\b(?:lease|lessor|lessee|landlord|tenant|agreement|contract|the parties)\b", re.IGNORECASE
)
#: A law's title ends with its kind, perhaps followed by the part of a series: "…的解释（一）".
_LAW_TITLE_RE = re.compile(_LAW_SUFFIX + r"(?:[（(][一二三四五六七八九十\d]{1,3}[）)])?$")


def _is_law_title(title: str) -> bool:
    return bool(_LAW_TITLE_RE.search(title))


def statutes_and_articles(text: str, in_contract: bool | None = None) -> tuple[list[StatuteMention], list[ArticleMention]]:
    """The laws cited and the articles that name no law. ``in_contract`` says whether the text
    is (part of) a contract; when None, the text's own words decide (``CONTRACT_CONTEXT_RE``)."""
    contract = bool(CONTRACT_CONTEXT_RE.search(text)) if in_contract is None else in_contract
    statutes: list[StatuteMention] = []
    articles: list[ArticleMention] = []
    taken: list[tuple[int, int]] = []

    def free(start: int, end: int) -> bool:
        return not any(start < b and a < end for a, b in taken)

    for match in _TITLED_RE.finditer(text):
        law, n = match.group("law"), match.group("n")
        if _is_law_title(law):
            statutes.append(StatuteMention(match.start(), match.end(), match.group(0), law, article_number(n) if n else None))
            taken.append(match.span())
        elif n:  # 《房屋租赁合同》第八条: an article of the contract named
            articles.append(ArticleMention(match.start(), match.end(), match.group(0), article_number(n), True))
            taken.append(match.span())
    for match in _BARE_LAW_RE.finditer(text):
        if not free(*match.span()):
            continue
        law = _LEAD_RE.sub("", match.group("law"))
        if not law or law in ("法", "本法") or law.endswith(("合同法", "协议法")) and len(law) < 4:
            continue
        start = match.start("law") + len(match.group("law")) - len(law)
        statutes.append(StatuteMention(start, match.end(), text[start:match.end()], law.removeprefix("中华人民共和国"),
                                       article_number(match.group("n"))))
        taken.append((start, match.end()))
    for match in _EN_STATUTE_RE.finditer(text):
        if free(*match.span()):
            statutes.append(StatuteMention(match.start(), match.end(), match.group(0), match.group("law"),
                                           int(match.group("n"))))
            taken.append(match.span())
    for match in _ARTICLE_RE.finditer(text):
        if free(*match.span()):
            before = text[max(0, match.start() - 2):match.start()]
            articles.append(ArticleMention(match.start(), match.end(), match.group(0), article_number(match.group("n")),
                                           contract or before in ("合同", "协议", "约定")))
    for match in _EN_ARTICLE_RE.finditer(text):
        if free(*match.span()):
            articles.append(ArticleMention(match.start(), match.end(), match.group(0), int(match.group("n")),
                                           contract or bool(match.group("of")) or match.group("kind").lower() == "clause"))
    return sorted(statutes, key=lambda s: s.start), sorted(articles, key=lambda a: a.start)
