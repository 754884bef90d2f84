"""A new offer of the same side replaces the standing one: "保险公司那边又涨到8万5了" after
"保险公司理赔员…说可以一次性赔6万了结", "the amount is now RMB 150,000" after "the Company proposes
to pay RMB 132,000". An offer raised or lowered says no word of correction, yet only the newest
offer is the current one; the older one stays in history (the note is superseded, not erased).

The first offer stays a true event, so the stored note is revised, not cut: "公司HR…说愿意给3万了事，
她觉得太少。" becomes "公司HR…说愿意给3万了事，她觉得太少（此后报价已改为5万8）。" — the old value
is never read as the current one, and the new offer is its own note too. Offers are read by
``legaltext.offers`` (a wish or a condition is none).
"""
from __future__ import annotations

import re

from legaltext.offers import Offer, offers, same_side
from legaltext.values import values


def revised_by_new_offer(new_text: str, old_text: str, said: str = "") -> tuple[str, str] | None:
    """The stored note ``old_text`` with the offer ``new_text`` makes said after the old one
    ("…说愿意给3万了事（此后报价已改为5万8）"), and why — or None when ``new_text`` makes no new
    offer of a side that made one in ``old_text``. The turn ``said`` reads an offer its note split
    in two ("Emily sent another offer today." / "… the amount is now RMB 150,000")."""
    older = offers(old_text)
    if not older:
        return None
    for new in _offers_of(new_text, said):
        replaced = [old for old in older if same_side(new, old)]
        if not replaced or any(old.amount.matches(new.amount) for old in replaced):
            continue
        why = (f"a new offer of the same side replaces the standing one: {replaced[-1].amount.text} is now "
               f"{new.amount.text} (rule {new.rule})")
        return _since_changed(old_text, replaced[-1], new), why
    return None


def _offers_of(new_text: str, said: str) -> list[Offer]:
    """The offers of the new statement: its own, and those of its turn whose sum it states."""
    own = offers(new_text)
    stated = values(new_text)
    return own + [offer for offer in offers(said) if said != new_text
                  and any(value.matches(offer.amount) for value in stated)]


#: The closing marks of a sentence, kept after the words added to it (a closing quote is not one:
#: what was quoted is never rewritten).
_CLOSING_RE = re.compile(r"[。.！!；;，,\s]*$")


def _since_changed(text: str, old: Offer, new: Offer) -> str:
    """``text`` with "since changed to <new sum>" at the end of the old offer's sentence, in the
    sentence's language: the first offer stays a true event, and no reader takes it as the
    current one."""
    sentence = text[old.start:old.end]
    body = sentence[:_CLOSING_RE.search(sentence).start()]
    english = not re.search(r"[\u4e00-\u9fff]", body)
    added = f" (since changed to {new.amount.text})" if english else f"（此后报价已改为{new.amount.text}）"
    return text[:old.start] + body + added + sentence[len(body):] + text[old.end:]
