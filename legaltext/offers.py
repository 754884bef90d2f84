"""Offers to settle: what the other side offers to pay, and who offers it.

"公司HR前两天私下找她，说愿意给3万了事", "保险公司那边又涨到8万5了", "the Company proposes to pay
RMB 132,000 in full and final settlement": an offer is a standing value — the newest one from the
same side is the current offer, and the older one is history (a raised offer says no word of
correction: "公司又加到了3万5"). A wish or a condition is no offer: "如果公司愿意一次性给8万，她就
不去仲裁了" is the client's floor, "建议把调解底线定在9万" the assistant's advice.

``offers(text)`` finds each offer with the sentence that holds it and the words that name the
side making it (公司, HR, 保险公司, the Company, a person's name); ``same_side`` says whether two
offers come from one side. Each way of wording an offer is a named rule in ``RULES``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .names import names
from .sentences import sentence_offsets
from .values import Value, values


@dataclass(frozen=True)
class OfferRule:
    """One way an offer is worded: its name, why it is one, and the words before the sum."""

    name: str
    why: str
    pattern: re.Pattern[str]


#: How many characters may stand between an offer's words and its sum ("可以一次性赔6万",
#: "proposes to pay RMB 132,000").
_GAP = r"[^，。；,;!?！？\d]{0,8}?"

#: The Chinese words that name the side making an offer (公司 of "公司又加到了3万5").
_ZH_SIDES = r"保险公司|理赔员|公司|单位|厂里|老板|HR|人事|司机|对方|房东|商家|卖家|开发商|物业|店长|经理"
_SIDE_RE = re.compile(_ZH_SIDES + r"|\b(?:company|employer|insurer|insurance|landlord|dealer|store|seller|HR)\b",
                      re.IGNORECASE)
#: A rise or a fall said right after its side or its price: "保险公司那边又涨到8万5", "价格加到360万";
#: not "房租又涨到5000" (the rent rose, nobody offered).
_MOVED_RE = (r"(?:^|[，,：:]|" + _ZH_SIDES + r"|那边|这边|价格?|报价|出价)"
             r"(?:又|再)?(?:加|涨|降|提|让|压|松口)(?:到|至)了?\s*$")

RULES: tuple[OfferRule, ...] = (
    OfferRule("willing-to-pay", "the other side says it will or can pay a sum (愿意给3万, 可以出5万8, 只能一次性给2万)",
              re.compile(r"(?:愿意|可以|只能|只肯|同意|答应|肯|最多|最高)" + _GAP + r"(?:给|赔|出|补|付|退)" + _GAP + r"$")),
    OfferRule("raised-or-lowered", "an offer moved up or down (又涨到8万5, 又加到了3万5, 价格加到360万)",
              re.compile(_MOVED_RE)),
    OfferRule("quoted-settlement", "a sum named as the offer or the settlement (报价5万, 和解金8万, 私了给2万)",
              re.compile(r"(?:报价|和解金|私了)[，,]?" + _GAP + r"$")),
    OfferRule("offer-in-english", "an offer or a proposal to settle in English (offers me 1,000, proposes to pay "
              "RMB 132,000)",
              re.compile(r"\b(?:offer(?:s|ed)?|propos(?:es|ed) to pay|willing to pay|settle for)\b[^.,;!?]{0,25}$",
                         re.IGNORECASE)),
    OfferRule("offer-now-in-english", "the sum of an offer named just before (another offer today … the amount is "
              "now RMB 150,000)",
              re.compile(r"\boffer\b[^;!?]{0,100}\b(?:amount|sum|figure) is now\s*$", re.IGNORECASE)),
)

#: A wish, a condition or a floor: the client's or the lawyer's words, no offer of the other side.
_NOT_AN_OFFER_RE = re.compile(r"如果|要是|只要|假如|若是|除非|希望|想要|底线|至少|不低于|建议|\bif\b|\bunless\b|\bwould accept\b",
                              re.IGNORECASE)
#: An English offer names its side in the sentence before ("Emily sent another offer today").
_ANOTHER_OFFER_RE = re.compile(r"\banother offer\b|又发了|又打来|又(?:加|涨|降|提|让|压)", re.IGNORECASE)


#: No smaller sum is an offer: "N+1" is a formula, not one yuan.
MIN_OFFER = 100


@dataclass(frozen=True)
class Offer:
    """An offer found in a text: the sum, the span of the sentence holding it, and the words
    naming the side that made it (lower case)."""

    amount: Value
    start: int
    end: int
    sides: frozenset[str]
    again: bool  # said as a new offer of a side that offered before ("涨到", "another offer")
    rule: str


def offers(text: str) -> list[Offer]:
    """The offers ``text`` states, in order; none for a wish or a condition."""
    found: list[Offer] = []
    spans = sentence_offsets(text)
    for index, (start, end) in enumerate(spans):
        sentence = text[start:end]
        if _NOT_AN_OFFER_RE.search(sentence) or sentence.rstrip().endswith(("？", "?")):
            continue
        before = text[spans[index - 1][0]:start] if index else ""
        for amount in values(sentence):
            if amount.kind not in ("money", "number") or amount.magnitude < MIN_OFFER:
                continue
            said_before = before + sentence[:amount.start]
            rule = next((r for r in RULES if r.pattern.search(said_before)), None)
            if rule is None:
                continue
            found.append(Offer(replace(amount, start=amount.start + start, end=amount.end + start), start, end, _sides(before + sentence),
                               rule.name == "raised-or-lowered" or bool(_ANOTHER_OFFER_RE.search(before + sentence)),
                               rule.name))
            break
    return found


def same_side(newer: Offer, older: Offer) -> bool:
    """Whether two offers come from one side: they name a side in common, or the newer one is
    said as another offer and one of them names no side."""
    if newer.sides & older.sides:
        return True
    return newer.again and not (newer.sides and older.sides)


def _sides(text: str) -> frozenset[str]:
    found = {m.group(0).lower() for m in _SIDE_RE.finditer(text)}
    found |= {n.text for n in names(text) if n.kind == "person"}
    return frozenset(found)

