"""English statements rewritten in the third person with the speakers' names.

A note must stand on its own months later, so "I went to a support group yesterday"
said by Caroline becomes "Caroline went to a support group yesterday". Two forms:

- ``direct``: the speaker's name replaces "I" (with the verb agreeing: "I am" → "Caroline
  is", "I love" → "Caroline loves"), "my" becomes "Caroline's", "you" the other party's
  name. Used for statements the engine classified.
- ``reported``: "Caroline said they …", with first-person pronouns as singular "they"
  (verbs then need no change). Used for what the engine could not classify and for
  sentences about "we", where "Caroline" alone would be wrong.

Quoted text is left as said. Deterministic and rule-based: an unusual verb may keep its
first-person form, never a wrong name.
"""

from __future__ import annotations

import re

from ..quoting import outside_quotes, rewritten_outside_quotes
from .stopwords import STOPWORDS

_PLURAL_RE = re.compile(r"\b(?:we|we're|we've|we'll|we'd|us|our|ours|ourselves)\b", re.IGNORECASE)
_NOT_PRESENT = frozenset(
    """am is are was were be been being have has had do does did can could will would shall should may might
    must ought need dare used went bought paid sold got gave took made met saw began ran flew drove wrote read
    built spent left lost won found broke sent told felt kept brought thought heard sat stood understood
    also just really still always never often usually already finally recently actually even only ever
    sometimes totally absolutely definitely""".split()
)
_ADVERBS = r"(?:also|just|really|still|always|never|often|usually|already|finally|recently|actually|even|only|sometimes|totally|absolutely|definitely)"
_AUX: dict[str, str] = {
    "'m": "is", " am": "is", " was": "was", "'ve": "has", " have": "has", "'d": "would", "'ll": "will",
    " do": "does", " don't": "doesn't", " do not": "does not", " haven't": "hasn't", " have not": "has not",
    " am not": "is not",
}
_AGREEMENT: dict[str, str] = {"have": "has", "do": "does", "am": "is"}
_REPORTED: tuple[tuple[str, str], ...] = (
    (r"\bi'm\b|\bi am\b", "they are"), (r"\bi was\b", "they were"), (r"\bi've\b", "they have"),
    (r"\bi'd\b", "they would"), (r"\bi'll\b", "they will"), (r"\bi\b", "they"), (r"\bme\b", "them"),
    (r"\bmy\b", "their"), (r"\bmine\b", "theirs"), (r"\bmyself\b", "themselves"),
    (r"\bwe're\b|\bwe are\b", "they are"), (r"\bwe've\b", "they have"), (r"\bwe'll\b", "they will"),
    (r"\bwe'd\b", "they would"), (r"\bwe\b", "they"), (r"\bus\b", "them"), (r"\bour\b", "their"),
    (r"\bours\b", "theirs"), (r"\bourselves\b", "themselves"),
)
_REPORTED_RES = tuple((re.compile(p, re.IGNORECASE), r) for p, r in _REPORTED)
_YOU: tuple[tuple[str, str], ...] = (
    (r"\byou're\b|\byou are\b", "{o} is"), (r"\byou were\b", "{o} was"), (r"\byou've\b|\byou have\b", "{o} has"),
    (r"\byou'll\b", "{o} will"), (r"\byou'd\b", "{o} would"), (r"\byours\b", "{o}'s"), (r"\byourself\b", "{o}"),
    (r"\byour\b", "{o}'s"), (r"\byou\b", "{o}"),
)
_YOU_RES = tuple((re.compile(p, re.IGNORECASE), r) for p, r in _YOU)
_I_AUX_RE = re.compile(r"\bI(?P<aux>'m|'ve|'d|'ll| am not| am| was| have not| haven't| have| do not| don't| do)\b", re.IGNORECASE)
_I_VERB_RE = re.compile(rf"\b[Ii]\s+(?P<adv>{_ADVERBS}\s+)?(?P<verb>[a-z]+(?:-[a-z]+)*)\b")
_I_RE = re.compile(r"\b(?:I|i(?=\s))\b")
_FIRST_SINGULAR: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bmy\b", re.IGNORECASE), "{n}'s"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "{n}'s"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "{n}"),
    (re.compile(r"\bme\b", re.IGNORECASE), "{n}"),
)


def third_person_singular(verb: str) -> str:
    """'love' → 'loves', 'watch' → 'watches', 'try' → 'tries', 'have' → 'has'."""
    if verb == "have":
        return "has"
    if verb.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(verb) > 1 and verb.endswith("y") and verb[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _you(text: str, other: str) -> str:
    for pattern, replacement in _YOU_RES:
        text = pattern.sub(replacement.format(o=other), text)
    return text


def _direct(text: str, name: str, other: str) -> str:
    def verb(match: re.Match[str]) -> str:
        prefix, _, word = match.group("verb").rpartition("-")  # "re-read": the verb is its last part
        prefix = f"{prefix}-" if prefix else ""
        adverb = match.group("adv") or ""
        if word in _AGREEMENT:
            return f"{name} {adverb}{prefix}{_AGREEMENT[word]}"
        if word in _NOT_PRESENT or word.endswith("ed"):
            return f"{name} {adverb}{prefix}{word}"
        return f"{name} {adverb}{prefix}{third_person_singular(word)}"

    text = _I_AUX_RE.sub(lambda m: f"{name} {_AUX[m.group('aux').lower()]}", text)
    text = _I_VERB_RE.sub(verb, text)
    text = _I_RE.sub(name, text)
    for pattern, replacement in _FIRST_SINGULAR:
        text = pattern.sub(replacement.format(n=name), text)
    return _you(text, other)


def _reported(text: str, other: str) -> str:
    for pattern, replacement in _REPORTED_RES:
        text = pattern.sub(replacement, text)
    return _you(text, other)


def _lower_first_word(text: str) -> str:
    """Lower-case the first word after 'said' unless it is a name ('The' → 'the', 'Caroline' stays)."""
    match = re.match(r"[A-Za-z']+", text)
    if match and match.group(0).lower() in STOPWORDS and not match.group(0).isupper():
        return text[0].lower() + text[1:]
    return text


def in_third_person(text: str, name: str, other: str, *, person: bool = True) -> str:
    """The statement with the speaker's name for "I" (direct form), or in reported form when
    it speaks for several people ("we") or does not mention the speaker; quotes untouched."""
    if _PLURAL_RE.search(outside_quotes(text)):
        return reported(text, name, other)
    direct = rewritten_outside_quotes(text, lambda part: _direct(part, name, other))
    if person and name not in direct:  # "It's been a dream to …" only makes sense as something Caroline said
        return reported(text, name, other)
    return direct


def reported(text: str, name: str, other: str) -> str:
    """'Caroline said they …': what the speaker said, in reported speech."""
    body = rewritten_outside_quotes(text, lambda part: _reported(part, other))
    return f"{name} said {_lower_first_word(body)}"
