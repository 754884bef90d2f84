"""Numbers and money as people write them: '8,000元', '1.5万', '三千元', '18万8', '3万5', '$2.5 million'.

The one reader of numerals in the product: Chinese numerals (一万四千, 二〇二四, 十八万八), Arabic
numbers with thousands separators and a multiplier (万, 千, k, million), and money amounts
with their currency. Everything works on the text as written; values are ``Decimal``.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from decimal import Decimal

_MULTIPLIERS: dict[str, int] = {
    "万": 10_000, "千": 1_000, "亿": 100_000_000,
    "k": 1_000, "thousand": 1_000, "million": 1_000_000, "billion": 1_000_000_000,
}
#: An Arabic number and its multiplier; "3万5" / "18万8" carry a trailing digit of the next
#: lower place (3万5 = 35000), read by ``_colloquial`` before this pattern.
ARABIC_RE = re.compile(r"(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>万|千|亿|[kK]\b|thousand|million|billion)?")
_COLLOQUIAL_RE = re.compile(r"(?<![\d.])(?P<number>\d{1,4})(?P<unit>[万千])(?P<tail>\d)(?![\d.])")
_DIGIT_COMMA_RE = re.compile(r"(?<=\d)[,，](?=\d{3})")
CN_NUMERAL_CHARS = "零〇一二两三四五六七八九十百千万亿壹贰叁肆伍陆柒捌玖拾佰仟"
CN_NUMERAL_RE = re.compile(f"[{CN_NUMERAL_CHARS}]+")
CN_DIGITS: dict[str, int] = {
    "零": 0, "〇": 0, "一": 1, "壹": 1, "二": 2, "两": 2, "贰": 2, "三": 3, "叁": 3, "四": 4, "肆": 4,
    "五": 5, "伍": 5, "六": 6, "陆": 6, "七": 7, "柒": 7, "八": 8, "捌": 8, "九": 9, "玖": 9,
}
_CN_UNITS: dict[str, int] = {"十": 10, "拾": 10, "百": 100, "佰": 100, "千": 1_000, "仟": 1_000}
_CN_BIG_UNITS: dict[str, int] = {"万": 10_000, "亿": 100_000_000}
#: A run of digits that is an identifier rather than a quantity: order, phone, ID and case numbers.
LONG_DIGITS_RE = re.compile(r"(?<!\d)\d{5,}(?!\d)")


def normalised(text: str) -> str:
    """Full-width digits made ASCII, thousands separators removed ("８,000" → "8000")."""
    return _DIGIT_COMMA_RE.sub("", unicodedata.normalize("NFKC", text or ""))


def chinese_number(text: str) -> int | None:
    """'三千' → 3000, '一万四千' → 14000, '二〇二四' → 2024, '十二' → 12, '十八万八' → 188000
    (a lone digit after 万 / 千 is of the next lower place, as people say it); None when not a numeral."""
    if not text or any(ch not in CN_DIGITS and ch not in _CN_UNITS and ch not in _CN_BIG_UNITS for ch in text):
        return None
    if all(ch in CN_DIGITS for ch in text):
        return int("".join(str(CN_DIGITS[ch]) for ch in text))
    total = section = digit = 0
    last_unit = 0
    for ch in text:
        if ch in CN_DIGITS:
            digit = CN_DIGITS[ch]
            if ch in "零〇":
                last_unit = 0  # "一万零八": the 8 is ones
        elif ch in _CN_UNITS:
            section += (digit or 1) * _CN_UNITS[ch]
            digit, last_unit = 0, _CN_UNITS[ch]
        else:
            total += ((section + digit) or 1) * _CN_BIG_UNITS[ch]
            section = digit = 0
            last_unit = _CN_BIG_UNITS[ch]
    if digit and last_unit >= 100 and text[-2] in "百佰千仟万亿":
        digit *= last_unit // 10  # 三千五 = 3500, 十八万八 = 188000
    return total + section + digit


def _colloquial_value(match: re.Match[str]) -> Decimal:
    unit = _MULTIPLIERS[match.group("unit")]
    return Decimal(match.group("number")) * unit + Decimal(match.group("tail")) * (unit // 10)


def arabic_value(match: re.Match[str]) -> Decimal:
    """The value of an ``ARABIC_RE`` match, its unit applied ('1.5万' → 15000, '3.5k' → 3500)."""
    unit = (match.group("unit") or "").lower()
    return Decimal(match.group("number")) * _MULTIPLIERS.get(unit, 1)


def number_values(text: str) -> set[Decimal]:
    """Every number ``text`` states, as a value: '8,000元' and '8000元' are 8000, '1.5万' is
    both 1.5 and 15000, '八千元' is 8000, '3万5' is 35000 (and its parts)."""
    text = normalised(text)
    values: set[Decimal] = set()
    for match in _COLLOQUIAL_RE.finditer(text):
        values.add(_colloquial_value(match))
    for match in ARABIC_RE.finditer(text):
        values.update({Decimal(match.group("number")), arabic_value(match)})
    for match in CN_NUMERAL_RE.finditer(text):
        value = chinese_number(match.group(0))
        if value is not None and any(ch in CN_DIGITS or ch in "十拾" for ch in match.group(0)):
            values.add(Decimal(value))  # a lone "万" / "千" is a unit, not a number
    return values


def amount_value(amount: str) -> Decimal | None:
    """The value of an amount as written ('14,000元' → 14000, '18万8' → 188000, '三千元' → 3000)."""
    text = normalised(amount)
    colloquial = _COLLOQUIAL_RE.search(text)
    if colloquial:
        return _colloquial_value(colloquial)
    match = ARABIC_RE.search(text)
    if match:
        return arabic_value(match)
    numeral = CN_NUMERAL_RE.search(text)
    value = chinese_number(numeral.group(0)) if numeral else None
    return Decimal(value) if value is not None else None


def small_number(token: str) -> int | None:
    """A count or a day / month written in digits or Chinese numerals ('12', '十二', '两');
    None for anything else."""
    token = normalised(token)
    return int(token) if token.isdigit() else chinese_number(token)


# --- money --------------------------------------------------------------------------------

#: A number is matched from its first digit only, so a long run of digits and commas
#: ('1,1,1,…') is scanned once instead of once per digit.
_NUMBER_START = r"(?<![\d.])(?<!\d,)"
_AMOUNT_PATTERNS: tuple[str, ...] = (
    # English notations: $3,500, €20k, RMB 20,000, 3,500 dollars, $2.5 million
    r"(?:RMB|USD|CNY|EUR|GBP|HKD|US\$|HK\$)\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:[kK]|thousand|million|billion)\b)?",
    r"[$€£]\s?\d[\d,]*(?:\.\d+)?(?:\s?(?:[kK]|thousand|million|billion)\b)",
    _NUMBER_START + r"\d[\d,]*(?:\.\d+)?\s?(?:[kK]|thousand|million|billion)?\s?(?i:dollars|bucks|euros|pounds|yuan)\b",
    r"[￥¥$＄€£]\s*\d[\d,，]*(?:\.\d+)?\s*(?:万|千)?\s*(?:元)?",
    # 18万8元, 3万5: the trailing digit belongs to the amount (it is not an amount of 5)
    _NUMBER_START + r"\d{1,4}[万千]\d(?![\d.])\s*(?:元|块钱|块|人民币)?",
    _NUMBER_START + r"\d[\d,]*(?:\.\d+)?\s*(?:万|千)?\s*(?:元|块钱|块|人民币|美元|RMB|rmb|CNY|USD)",
    rf"(?<![{CN_NUMERAL_CHARS}])[{CN_NUMERAL_CHARS}]+\s*(?:元|块钱|块(?=[，。,.；;\s]|$))",
)
AMOUNT_RE = re.compile("|".join(f"(?:{p})" for p in _AMOUNT_PATTERNS))

_CURRENCIES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("HKD", re.compile(r"HK\$|HKD", re.IGNORECASE)),
    ("USD", re.compile(r"US\$|USD|\$|＄|美元|dollars?|bucks", re.IGNORECASE)),
    ("EUR", re.compile(r"€|EUR|euros?", re.IGNORECASE)),
    ("GBP", re.compile(r"£|GBP|pounds?", re.IGNORECASE)),
    ("CNY", re.compile(r"元|块|人民币|RMB|CNY|[￥¥]|yuan", re.IGNORECASE)),
)


def currency(amount: str) -> str:
    """The ISO code of an amount's currency as written ('$3,500' → USD, '5000元' → CNY)."""
    return next((code for code, pattern in _CURRENCIES if pattern.search(amount)), "CNY")


@dataclass(frozen=True)
class Amount:
    """A sum of money in the text: its span, the words as written, value and currency."""

    start: int
    end: int
    text: str
    value: Decimal | None
    currency: str


@dataclass(frozen=True)
class Number:
    """A plain number that is not money, a date or an identifier ('3000' in '押金是3000')."""

    start: int
    end: int
    text: str
    value: Decimal


def amounts(text: str) -> list[Amount]:
    """Every money amount of ``text`` with its span, in order."""
    found = []
    for match in AMOUNT_RE.finditer(text):
        written = match.group(0).rstrip(",， ")
        found.append(Amount(match.start(), match.start() + len(written), written, amount_value(written),
                            currency(written)))
    return found


_PLAIN_NUMBER_RE = re.compile(
    rf"(?<![\d.A-Za-z])\d{{1,3}}(?:,\d{{3}})+(?:\.\d+)?(?![\d])"
    rf"|(?<![\d.A-Za-z])\d{{1,4}}[万千]\d(?![\d.])"
    rf"|(?<![\d.A-Za-z])\d+(?:\.\d+)?(?:\s*(?:万|千|亿))?(?![\d])"
    rf"|[{CN_NUMERAL_CHARS}]{{2,}}"
)


def plain_numbers(text: str, taken: list[tuple[int, int]]) -> list[Number]:
    """Numbers of ``text`` outside the spans already read as something else (amounts, dates,
    identifiers, durations)."""
    found = []
    for match in _PLAIN_NUMBER_RE.finditer(text):
        start, end = match.span()
        if any(start < b and a < end for a, b in taken):
            continue
        value = amount_value(match.group(0))
        if value is None or (match.group(0)[0] in CN_NUMERAL_CHARS and not any(
                ch in CN_DIGITS or ch in "十拾" for ch in match.group(0))):
            continue
        found.append(Number(start, end, match.group(0), value))
    return found
