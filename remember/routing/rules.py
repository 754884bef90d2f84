"""Routing's relations between a new statement and a stored note, as named rules.

``slots.compare(new, old)`` decides which relation two statements stand in (docs/routing.md,
"The rules"); each relation is registered here in the "routing" table of ``memory.rules`` with
one line on what it means for the notes, so ``manage.py rules`` lists them beside the
extraction checks. A rule's function answers whether ``compare`` puts a pair in its relation:
``(new, old) -> bool``. Registering them changes nothing in how a turn is routed.
"""
from __future__ import annotations

from collections.abc import Callable

from django.utils.translation import gettext_lazy as _

from legaltext.as_of import HELD_FROM_RULES, held_from
from memory.rules import Rule, register
from remember.routing.offers import revised_by_new_offer
from remember.routing.rejected import revised_by_rejection
from remember.routing.replaced_word import revised_by_replaced_word
from remember.routing.respelled import revised_by_respelling
from remember.routing.slots import Kind, compare
from remember.routing.swapped import revised_by_swap

TABLE = "routing"

_WHY = {
    Kind.DUPLICATE: _("The same fact said again is one note, kept once."),
    Kind.CORRECTION: _("A correction of the same point (更正, 不是…而是, actually) replaces the note it corrects; "
                       "the old one stays in history."),
    Kind.VALUE_CHANGE: _("The same point with another value replaces the note that held the old value."),
    Kind.NEGATION: _("A statement and its denial are about the same point: the newer replaces the older."),
    Kind.DISTINCT_EVENT: _("Another date, instalment, number, person or statute is another event: both notes stay, linked."),
    Kind.OTHER: _("A statement about something else is a note of its own."),
}


def _in_relation(kind: Kind) -> Callable[[tuple[str, str]], bool]:
    def check(pair: tuple[str, str]) -> bool:
        return compare(*pair).kind == kind
    return check


for _kind, _why in _WHY.items():
    register(Rule(TABLE, _kind.value.replace("_", "-"), _why, _in_relation(_kind)))
register(Rule(
    TABLE, "rejected-value",
    _("A correction that names the wrong value (不是7天，是9天; not 30 June) rewrites the note that states "
      "that value once with the new one; the old note stays in history."),
    lambda pair: revised_by_rejection(pair[0], pair[0], pair[1]) is not None,
))
register(Rule(
    TABLE, "respelled-name",
    _("A correction of how a name is written (是“鼎晟物业”，日字头那个晟) rewrites the note that writes it one "
      "character otherwise; the old note stays in history."),
    lambda pair: revised_by_respelling(pair[0], pair[0], pair[1]) is not None,
))
register(Rule(
    TABLE, "swapped-values",
    _("Two values said the wrong way round (比例说反了：签约时付的是70%，验收后付30%) trade places in the note "
      "that states both; the old note stays in history."),
    lambda pair: revised_by_swap(pair[0], pair[1]) is not None,
))
register(Rule(
    TABLE, "replaced-word",
    _("A correction that names the wrong word, not a value (不是出租车，是网约车; a van, not a taxi), rewrites the "
      "note that says that word once with the right one; the old note stays in history."),
    lambda pair: revised_by_replaced_word(pair[0], pair[0], pair[1]) is not None,
))
register(Rule(
    TABLE, "new-offer",
    _("A new offer of the same side (公司又加到了3万5; the amount is now RMB 150,000) replaces the standing offer; "
      "what the old note says besides the offer stays current, the old offer stays in history."),
    lambda pair: revised_by_new_offer(pair[0], pair[1]) is not None,
))

# When a new note's fact began to hold, read from its words (``legaltext.as_of.held_from``): its
# ``valid_from``, and the end of the value it replaces (``memory.services.notes.world_start``).
_WORLD_START_WHY = {
    "zh-from-date": _("自 / 从 a date (起, 至 after it: 自2026年4月1日起…): the fact held from that day, and the "
                      "value it replaces until then."),
    "zh-date-on": _("A date followed by 起 / 开始 (2024年3月起租金5000元): the fact held from that day, and the "
                    "value it replaces until then."),
    "en-from-date": _("From / starting / effective a date (effective from 1 April 2026): the fact held from that "
                      "day, and the value it replaces until then."),
}
for _rule in HELD_FROM_RULES:
    register(Rule(TABLE, _rule.name, _WORLD_START_WHY[_rule.name],
                  lambda text, _name=_rule.name: (held_from(text or "") or (None, None))[1] == _name,
                  stage="world-start"))
