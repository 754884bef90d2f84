"""Exact identifiers: Chinese ID numbers, court case numbers, invoice and contract numbers,
phone numbers, document codes, long numbers, and the tail of a bank account.

``PATTERNS`` is the table the read path matches exactly (``recall.identifiers``: a question
naming "(2025)浙0106民初1234号" wants the memories holding exactly it); the reader adds the
account tail ('尾号6789', 'account ending 6789'), which names four digits too few to match
alone. Matching reads the text with full-width forms folded to ASCII (NFKC: "（2025）" is
"(2025)"), letters in upper case.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_EDGE_BEFORE = r"(?<![0-9A-Za-z])"
_EDGE_AFTER = r"(?![0-9A-Za-z])"
#: kind → pattern, over the NFKC form of the text (ASCII parentheses, digits and letters).
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # 18 characters: 17 digits and a digit or X (GB 11643), starting with a province code.
    ("id_number", re.compile(_EDGE_BEFORE + r"[1-9]\d{5}(?:19|20)\d{2}(?:0[1-9]|1[0-2])(?:[0-2]\d|3[01])\d{3}[\dXx]"
                             + _EDGE_AFTER)),
    # (2025)浙0106民初1234号: year, court, kind of case, number.
    ("case_number", re.compile(r"\((?:19|20)\d{2}\)[\u4e00-\u9fff]{0,2}\d{0,6}[\u4e00-\u9fff]{1,6}\d{1,6}号")),
    # Labelled numbers: 发票号码 04403212, 合同编号 HT-2024-0315, invoice no. INV-2024-001.
    ("invoice_number", re.compile(r"(?:发票(?:号码|代码|号)|\binvoice\s*(?:no\.?|number|#))\s*[:：#]?\s*"
                                  r"([A-Za-z0-9][A-Za-z0-9-]{3,29})", re.IGNORECASE)),
    ("contract_number", re.compile(r"(?:合同(?:编号|号码|号)|\bcontract\s*(?:no\.?|number|#))\s*[:：#]?\s*"
                                   r"([A-Za-z0-9][A-Za-z0-9-]{3,29})", re.IGNORECASE)),
    # Mobile numbers (11 digits from 13… to 19…, also written in groups: "139 0571 2846",
    # "139-0571-2846") and landlines with an area code (010-12345678).
    ("phone_number", re.compile(_EDGE_BEFORE + r"(?:1[3-9]\d{9}|1[3-9]\d \d{4} \d{4}|1[3-9]\d-\d{4}-\d{4}|0\d{2,3}-\d{7,8})"
                                + _EDGE_AFTER)),
    # Document and transaction codes: letters then digits (INV-2024-001, TX20260301001, JD20260220).
    ("code", re.compile(_EDGE_BEFORE + r"[A-Za-z]{2,6}-?\d{4,}(?:-\d+)*" + _EDGE_AFTER)),
    # Any other long number (an e-invoice's 20 digits, an order or account number).
    ("number", re.compile(_EDGE_BEFORE + r"\d{10,30}" + _EDGE_AFTER)),
)
#: The last digits of a bank account or card, as people give them (not matched exactly: too short).
ACCOUNT_TAIL = ("account_tail", re.compile(
    r"(?:尾号|末四位|后四位|卡号末尾|账号末尾|\b(?:account|card)\s+(?:number\s+)?ending(?:\s+in)?)\s*(?:是|为|:|：)?\s*(\d{4})(?!\d)",
    re.IGNORECASE))


def normalise(text: str) -> str:
    """Full-width forms as ASCII, letters in upper case: how identifiers are compared."""
    return unicodedata.normalize("NFKC", text or "").upper()


def _folded(text: str) -> str:
    """``text`` with each full-width ASCII form as its ASCII character, one for one (spans stay)."""
    return "".join(chr(ord(ch) - 0xFEE0) if "！" <= ch <= "～" else ch for ch in text)


@dataclass(frozen=True)
class IdentifierMention:
    """An identifier in the text: its span, kind and value (NFKC, upper case)."""

    start: int
    end: int
    kind: str
    value: str


def identifier_mentions(text: str, *, with_account_tails: bool = True) -> list[IdentifierMention]:
    """The identifiers of ``text``, in the order of the table (kind by kind, each in the text's
    order), each span read once (a span claimed by one kind — an ID number — is not read again
    as another — a long number)."""
    plain = _folded(text or "")
    found: list[IdentifierMention] = []
    table = (*PATTERNS, ACCOUNT_TAIL) if with_account_tails else PATTERNS
    for kind, pattern in table:
        for match in pattern.finditer(plain):
            group = 1 if pattern.groups else 0
            start, end = match.span(group)
            if any(start < m.end and m.start < end for m in found):
                continue
            found.append(IdentifierMention(start, end, kind, normalise(match.group(group))))
    return found


def case_numbers(text: str) -> list[str]:
    """The court case numbers a text names ("(2025)浙0106民初1234号"), NFKC-normalised."""
    return [m.value for m in identifier_mentions(text, with_account_tails=False) if m.kind == "case_number"]
