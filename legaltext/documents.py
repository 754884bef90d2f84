"""What a document says about itself: its title (its first line, not the file name) and
whether it is a contract (then its articles are terms, never law), and its text with hard
line breaks mended so no clause is cut from its tail.

"lease_lin_2025_scan.txt" is a file name; "房屋租赁合同" on the first line is what a lawyer
cites. A lease's "第八条 房屋的自然损耗及正常使用产生的墙面污渍，\\n不属于乙方应当赔偿的损失范围。" is
one term of the contract: read line by line, its first line alone says the opposite.
"""
from __future__ import annotations

import re

from .sentences import sentence_spans

#: Longest first line taken as a title.
MAX_TITLE_CHARS = 40
#: Punctuation a title does not hold (a sentence, a label "Subject:", a list).
_NOT_IN_TITLE_RE = re.compile(r"[。，,；;：:！!？?]|^\s*(?:第[一二三四五六七八九十百\d]+条|\d+[.、])")
#: A title or words that say the document is a contract.
_CONTRACT_TITLE_RE = re.compile(r"合同|协议|租约|契约|\b(?:agreement|contract|lease|tenancy)\b", re.IGNORECASE)
_PARTIES = (("甲方", "乙方"), ("出租方", "承租方"), ("出租人", "承租人"), ("lessor", "lessee"), ("landlord", "tenant"),
            ("employer", "employee"), ("buyer", "seller"))
_CJK_RE = re.compile(r"[\u4e00-\u9fff]")


def document_title(text: str) -> str | None:
    """The document's title: its first non-empty line when that line reads as one (short, no
    sentence punctuation, not an article); None otherwise."""
    for line in text.splitlines():
        line = line.strip().lstrip("#").strip().strip("*").strip()  # "# 房屋租赁合同" in Markdown
        if not line:
            continue
        if len(line) <= MAX_TITLE_CHARS and not _NOT_IN_TITLE_RE.search(line) and (
                _CJK_RE.search(line) or len(line.split()) >= 2):
            return line
        return None
    return None


def named_like_a_file(name: str) -> bool:
    """Whether a file name's stem was made by a scanner or a system ("lease_lin_2025_scan",
    "IMG_0001") rather than chosen as a title ("房屋租赁合同", "Lease Agreement"): no Chinese, no
    space. Only such a name gives way to the title the content states."""
    return not _CJK_RE.search(name) and " " not in name.strip()


def is_contract(title: str, text: str) -> bool:
    """Whether a document is a contract: its title says so, or its text names both parties."""
    if _CONTRACT_TITLE_RE.search(title or ""):
        return True
    lowered = text.lower()
    return any(a in lowered and b in lowered for a, b in _PARTIES)


def mended(text: str) -> str:
    """``text`` one sentence per line: a line break inside a sentence (a hard wrap, a clause
    going on after a comma, a negating tail) is removed; Chinese lines are joined without a
    space, others with one."""
    lines = []
    for start, end in sentence_spans(text):
        parts = [part.strip() for part in text[start:end].splitlines() if part.strip()]
        joined = parts[0] if parts else ""
        for part in parts[1:]:
            glue = "" if _CJK_RE.match(part) or (joined and _CJK_RE.search(joined[-1])) else " "
            joined += glue + part
        lines.append(joined)
    return "\n".join(line for line in lines if line)


#: The parties' signature lines that close a contract ("甲方（签字）：周海峰", "出借人（签章）：",
#: "签订日期：", "Signed:"): no article goes on there.
SIGNATURE_LINE_RE = re.compile(r"^\s*(?:[^\s（(：:]{1,12}[（(](?:签字|签章|盖章|签名|签字并按手印|公章)[^）)]{0,8}[）)]"
                               r"|(?:签订|签署|签约)(?:日期|时间)|Signed\b|Signature\b|Date:)")
#: A line that opens an article or clause of a contract ("第五条 …", "Clause 7. …", "Article 3").
_ARTICLE_LINE_RE = re.compile(r"^\s*(?:第[一二三四五六七八九十百千零〇\d]+条|(?:Article|Clause|ARTICLE|CLAUSE)\s+\d+)")


def article_spans(text: str) -> list[tuple[int, int]]:
    """The spans of the articles of a contract's (mended) text: from a line that opens one to the
    line before the next opening, a blank line or the signatures. Text before the first article
    is in none."""
    spans: list[tuple[int, int]] = []
    start = None
    position = 0
    for line in text.splitlines(keepends=True):
        line_end = position + len(line.rstrip("\n"))
        ends = not line.strip() or bool(SIGNATURE_LINE_RE.match(line))
        if _ARTICLE_LINE_RE.match(line) or ends:
            if start is not None:
                spans.append((start, previous_end))
            start = None if ends else position
        previous_end = line_end
        position += len(line)
    if start is not None:
        spans.append((start, previous_end))
    return spans


#: A contract's formula of agreement, which binds nobody to anything: "根据《民法典》及有关规定，甲乙双方
#: 经协商一致，订立本合同。", "三方经协商一致，订立本协议。".
_AGREEMENT_FORMULA_RE = re.compile(
    r"^[^。；;]{0,60}?(?:协商一致|平等自愿)[^。；;]{0,20}?(?:订立|签订|签署|达成)本(?:合同|协议|补充协议)[。.]?$")
#: Words before the formula that say why or for what the contract was made: then it is kept.
_PURPOSE_RE = re.compile(r"需要|因|为了|借款|购买|租赁|转让")


def only_agrees(sentence: str) -> bool:
    """The sentence only says the parties agreed to the contract (judged "nothing a lawyer would
    file" by the note-truth readers); one that also says why or for what does more."""
    said = sentence.strip()
    if not _AGREEMENT_FORMULA_RE.match(said):
        return False
    head = re.split(r"协商一致|平等自愿", said, maxsplit=1)[0]
    return not _PURPOSE_RE.search(re.sub(r"《[^》]+》", "", head))
