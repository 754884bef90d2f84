"""The names and identifiers a question pins itself to, and whether anything the user may see holds them.

Recall must say "I have nothing on that" rather than return eight unrelated facts. Closeness
cannot tell: on the consultation dev split the nearest cosine and the keyword coverage of the
top hits are the same for questions about things never said (or said behind an ethical wall)
as for questions the memory answers (docs/evaluation.md, "Returning nothing"). What does tell is
a question that names something specific — a person, a plate or an ID number, a case number,
a long number — that appears nowhere in what the user may see: whatever the search returned
would be about someone or something else. Such a question is answered with nothing
(``SearchResult.nothing_on`` names the anchors), before any ranking runs.

An anchor is held when any active visible note, or any visible message that tells something
(not a question, not an answer the offline engine composed), contains it as a substring
(case-insensitive), so "王磊" is held by "王磊律师", the last digits "1584" by a card number
ending in them, and an amount written "8,800" by "8800" and the other way round. Numbers are anchors
from four digits, years excepted (a year is asked about in words as often as in digits).
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

import jieba
import jieba.posseg
from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db.models import Q, QuerySet

from legaltext.identifiers import case_numbers as court_case_numbers
from legaltext.names import common_surnames
from memory.models import Conversation, Message, Note
from memory.models.conversations import SEARCH_CONFIG
from memory.segmentation import ensure_initialised, is_common_word, search_text, segment

# jieba's part-of-speech tag for people's names. Its place, organisation and transliteration
# tags also mark common words ("上门", "新店" as places, "年卡加私教" -> "卡加"), and an English
# name may be the memory's Chinese one in pinyin ("Liu Jianguo" for 刘建国): none is an anchor.
NAME_TAG = "nr"
MIN_NAME_CHARS, MAX_NAME_CHARS = 2, 4
# A person's name starts with a surname: the 189 commonest cover nearly everyone, and keep
# out the words jieba guesses to be names ("年卡加私教" -> "卡加"). Two-character surnames
# (欧阳, 司马…) start with one of these too, or are rare enough to go unanchored.
SURNAMES = frozenset(common_surnames(189))
# jieba's guesser glues a following particle to a new name ("赵敏那个同事" -> "赵敏那").
_TRAILING_PARTICLES = "那这的呢说和跟与在是了吗"
MIN_NUMBER_DIGITS = 4
_YEAR = re.compile(r"(19|20)\d\d")  # a year is asked about in words ("去年") as often as in digits
MAX_ANCHORS = 6  # a question naming more than this is a pasted text, not a pinned question
# Plates, case and invoice numbers mix letters and digits ("苏A·3M58Q" -> 3M58Q); "2N" is a
# formula, hence at least four characters.
_IDENTIFIER = re.compile(r"(?<![A-Za-z0-9])(?=[A-Za-z0-9-]*\d)(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9-]{4,}(?![A-Za-z0-9])")
_NUMBER = re.compile(r"\d[\d,，]*\d")


@dataclass(frozen=True)
class Anchor:
    """One name or identifier of the question, with the spellings that count as holding it."""

    text: str
    spellings: tuple[str, ...]


def question_anchors(question: str) -> list[Anchor]:
    """The question's Chinese personal names, identifiers mixing letters and digits, court
    case numbers and long numbers."""
    found: dict[str, Anchor] = {}
    question = unicodedata.normalize("NFKC", question)  # "（2025）" is "(2025)", "１２" is "12"
    for number in court_case_numbers(question):  # held with either width of brackets
        found.setdefault(number, Anchor(number, (number, number.replace("(", "（", 1).replace(")", "）", 1))))
        question = question.replace(number, " ")
    for match in _IDENTIFIER.findall(question):
        found.setdefault(match.lower(), Anchor(match, (match,)))
    for match in _NUMBER.findall(question):
        digits = re.sub(r"[,，]", "", match)
        if len(digits) < MIN_NUMBER_DIGITS or _YEAR.fullmatch(digits) or any(digits in a.text for a in found.values()):
            continue
        found.setdefault(digits, Anchor(match, tuple(dict.fromkeys((digits, _grouped(digits), match)))))
    for name in _chinese_names(question):
        found.setdefault(name, Anchor(name, (name,)))
    return list(found.values())[:MAX_ANCHORS]


def _grouped(digits: str) -> str:
    """"25000" -> "25,000": how an amount is often written (not an ID or account number)."""
    return f"{int(digits):,}" if len(digits) <= 9 and not digits.startswith("0") else digits


def _chinese_names(question: str) -> list[str]:
    ensure_initialised()  # jieba's dictionary, loaded once
    names = []
    for word, flag in jieba.posseg.cut(question):
        if flag != NAME_TAG or word.isascii() or is_common_word(word):
            continue
        name = word.rstrip(_TRAILING_PARTICLES)
        if name[:1] in SURNAMES and MIN_NAME_CHARS <= len(name) <= MAX_NAME_CHARS:
            names.append(name)
    return names


def unheld_anchors(user, reach, anchors: list[Anchor], exclude_message_ids: tuple[int, ...] = ()) -> list[str]:
    """The anchors nothing ``user`` may see holds anywhere — no active visible note, no complete
    message of a visible conversation that tells something (the same ``visible_to`` rule the
    search reads through). Empty when every anchor is held."""
    if not anchors:
        return []
    messages = _telling_messages(user, exclude_message_ids)
    notes = Note.objects.visible_to(user, **reach.literals()).active()
    return [anchor.text for anchor in anchors
            if not _held_as_word(anchor, messages, notes) and not _held_in_text(anchor, messages, notes)]


def _telling_messages(user, exclude_message_ids: tuple[int, ...]) -> QuerySet[Message]:
    """The visible messages that can hold an anchor: not the excluded ones (the chat's question
    itself), not a question (asking about 陈露 tells nothing about her, and a user who asks twice
    must get the same answer), not a reply that only repeats memory (the offline engine's answer
    repeats the question too)."""
    return (
        Message.objects.filter(conversation__in=Conversation.objects.visible_to(user), status=Message.Status.COMPLETE)
        .exclude(pk__in=exclude_message_ids)
        .exclude(repeats_memory=True)
        .exclude(role=Message.Role.USER, content__regex=r"[?？]\s*$")
    )


def _held_as_word(anchor: Anchor, messages: QuerySet[Message], notes: QuerySet[Note]) -> bool:
    """Held as one of the stored search words (the GIN indexes of messages and notes): the usual
    case, and cheap however many messages the user may see. Only a spelling that is one word:
    "8,800" is the words "8" and "800", which a message about "8月" and "800元" also holds."""
    for spelling in anchor.spellings:
        if len(segment(spelling)) != 1:
            continue
        words = SearchQuery(search_text(spelling), config=SEARCH_CONFIG, search_type="plain")
        if messages.filter(search_vector=words).exists():
            return True
        if notes.annotate(words=SearchVector("search_text", config=SEARCH_CONFIG)).filter(words=words).exists():
            return True
    return False


def _held_in_text(anchor: Anchor, messages: QuerySet[Message], notes: QuerySet[Note]) -> bool:
    """Held inside a longer word ("1584" in a card number): a scan of the visible texts, run
    only for an anchor no stored word holds."""
    holds = Q()
    for spelling in anchor.spellings:
        holds |= Q(content__icontains=spelling)
    return messages.filter(holds).exists() or notes.filter(holds).exists()
