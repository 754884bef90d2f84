"""The answer check's rules in the "answer" table of ``memory.rules`` (``manage.py rules``): the
support rules that keep or remove a marker (``chat.support.SUPPORT_RULES``) and the rules that
read what a question asks about (``legaltext.asked.ASKED_RULES``), which decide whether memory
holds anything on it. Each with one line of why in a lawyer's words."""
from __future__ import annotations

from django.utils.translation import gettext_lazy

from chat.support import SUPPORT_RULES
from legaltext.asked import ASKED_RULES
from memory.rules import Rule, register

_WHY = {
    "conflicting_value": gettext_lazy(
        "A cited memory that states another sum, date or rate than the sentence does not support it."),
    "missing_identifier": gettext_lazy(
        "A cited memory that does not hold the case, contract or ID number the sentence names does not support it."),
    "shared_key_value": gettext_lazy(
        "A cited memory that holds the sentence's sum, date, name or number supports it."),
    "shared_words": gettext_lazy("A cited memory that holds most of the sentence's words supports it."),
    "value-of-point": gettext_lazy(
        "A question asking the value of a thing (the plate number) is answered only by a memory naming that thing."),
    "whether-it-exists": gettext_lazy(
        "A question whether something exists (a dashcam video) is answered only by a memory naming it."),
    "who-or-which": gettext_lazy(
        "A question who or which (the legal representative) is answered only by a memory naming that role."),
    "what-kind": gettext_lazy(
        "A question what kind (the brand) is answered only by a memory naming it."),
    "english-attribute": gettext_lazy(
        "A question about a company's attribute (its registered address) is answered only by a memory naming it."),
}

# check((sentence, item)) → True / False / None (no verdict); check(question) → the asked words or None
for _support in SUPPORT_RULES:
    register(Rule("answer", _support.name, _WHY[_support.name],
                  lambda pair, _rule=_support: _rule.verdict(*pair), stage="support"))
for _asked in ASKED_RULES:
    register(Rule("answer", _asked.name, _WHY[_asked.name], _asked.terms, stage="asked"))
