"""A correction of how a name is written replaces the name in the stored note.

"更正一下，公司名字是“鼎晟物业”，日字头那个晟，不是茂盛的盛": the client corrects one character of a
name said before ("鼎盛物业"). Names are no values (``cued_slot`` compares sums, days and counts),
so this rule reads them apart: a name the turn gives — in quotation marks, or a person or
company the readers find — that differs from a name of the stored note (read the same way) of
the same length in exactly one character replaces that name.

Precision first: the turn must say it corrects something; the name must be in the new
statement and not in the stored note; it must have at least three characters (two-character
words differ in one character all the time) — or two when the turn names the wrong character
("借款人名字是韦栋，栋梁的栋，之前我打成了东": 韦东 is 韦栋); exactly one name of the note may fit.
"""
from __future__ import annotations

import re

from legaltext import read
from legaltext.corrections import says_it_corrects
from remember.routing.mentions import read_mentions

#: A name given in quotation marks ("公司名字是“鼎晟物业”").
_QUOTED_RE = re.compile(r"[“\"「『]([^”\"」』\s，,。]{3,20})[”\"」』]")
MIN_NAME_CHARS = 3
#: The character the client says was written wrong ("打成了东", "写成了“盛”", "不是茂盛的盛").
_WRONG_CHARACTER_RE = re.compile(r"(?:打成|写成|记成|写作|打作)了?[“\"「]?([\u4e00-\u9fff])(?![\u4e00-\u9fff]{2})|不是[\u4e00-\u9fff]{1,3}的([\u4e00-\u9fff])")


def _names_given(said: str, *, shortest: int = MIN_NAME_CHARS) -> set[str]:
    """The names ``said`` gives, of at least ``shortest`` characters."""
    reading = read(said)
    found = {m.group(1) for m in _QUOTED_RE.finditer(said)}
    found |= {n.text for n in (*reading.people, *reading.companies)} | read_mentions(said).people
    return {name for name in found if len(name) >= shortest}


def _wrong_characters(said: str) -> set[str]:
    return {m.group(1) or m.group(2) for m in _WRONG_CHARACTER_RE.finditer(said)}


def _one_character_apart(a: str, b: str) -> bool:
    return len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1


def _respellings(name: str, old_names: set[str]) -> set[str]:
    """The stored note's names written like ``name`` but for one character (not a letter case):
    "鼎盛物业" for "鼎晟物业" — a name, never any word that happens to look alike ("王晓得")."""
    return {old for old in old_names if _one_character_apart(old, name) and old.lower() != name.lower()}


def revised_by_respelling(said: str, new_text: str, old_text: str) -> tuple[str, str] | None:
    """The stored note ``old_text`` with the name ``said`` corrects written anew, and why — or None."""
    if not said.strip() or not says_it_corrects(said):
        return None
    fits = []
    old_names: set[str] | None = None  # read once, and only when a name is given
    wrong = _wrong_characters(said)
    for name in _names_given(said, shortest=2 if wrong else MIN_NAME_CHARS):
        if name not in new_text or name in old_text:
            continue
        if len(name) < MIN_NAME_CHARS:  # a two-character name: written with the character named as wrong
            old_words = {name[:i] + w + name[i + 1:] for i in range(len(name)) for w in wrong
                         if w != name[i] and name[:i] + w + name[i + 1:] in old_text}
        else:
            old_names = _names_given(old_text) if old_names is None else old_names
            old_words = _respellings(name, old_names)
        if len(old_words) == 1:
            fits.append((name, old_words.pop()))
    if len(fits) != 1:
        return None
    name, old_word = fits[0]
    return old_text.replace(old_word, name), f"the client corrects how a name is written: {old_word} is {name}"
