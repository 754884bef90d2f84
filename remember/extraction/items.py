"""What one extracted knowledge item is, and how raw extractor output
(LLM JSON or the offline engine) is checked before it may become a note.

An item is the extraction prompt's ``{"content", "category"}`` pair enriched with what a
note needs (docs/memory-model.md): AdaMem's event / fact / attribute type and
confidence, A-Mem's keywords / tags / context, importance, the memory layer it
most likely belongs to, and the dates and amounts it mentions. An LLM item is also checked
against the turn it came from (``grounding``: who said it, and that its speaker said it).
"""

from __future__ import annotations

import logging

import math
import re
import unicodedata
from dataclasses import dataclass, field, replace
from typing import Any

from memory.categories import Category

from . import lexicon, prompt
from .grounding import TurnText, with_names
from .pronouns import third_person
from .rules import (  # noqa: F401 (CLIENT_CATEGORIES, cites_statute, is_advice: read from here too)
    CLIENT_CATEGORIES, CONTENT, ENTRY, TURN, ItemCheck, Refusal, cites_statute, content_key, is_advice, offline_answer,
    run_stage, snippet,
)
from .statutes import repealed

logger = logging.getLogger(__name__)

#: At most five items are stored per turn (docs/write-path.md, Extraction).
MAX_ITEMS_PER_TURN = 5
#: Longest content kept; longer content is cut (a note is one piece of knowledge).
MAX_CONTENT_CHARS = 1000
#: Confidence given to an LLM item that does not state its own: the extraction prompt asks
#: only for knowledge worth keeping, so such an item must clear the ADD bar (> 0.7).
DEFAULT_LLM_CONFIDENCE = 0.8

MEMORY_TYPES: frozenset[str] = frozenset({"event", "fact", "attribute"})
SCOPES: frozenset[str] = frozenset({"case", "user_profile", "general_law", "cross_case", "global"})
SPEAKERS: frozenset[str] = frozenset(prompt.SPEAKERS)


@dataclass
class ExtractedItem:
    """One self-contained piece of knowledge from a turn, ready to become a note.

    ``category`` holds the Chinese label (``Category.zh``). ``speaker`` says
    whose words it came from, for provenance and for the speaker rules: "user" or
    "assistant" when it came from one message (the offline engine knows; an LLM says so
    in its optional "speaker" field), "turn" when it draws on both.
    """

    content: str
    category: str
    memory_type: str
    confidence: float
    keywords: list[str]
    tags: list[str]
    context: str
    importance: float
    scope_hint: str
    dates: list[str]
    amounts: list[str]
    speaker: str = field(default="turn")
    #: Which engine wrote it when that is not the turn's: "rules" for a client fact the rule
    #: engine added under an LLM's items (``remember.client_facts``); "" otherwise.
    origin: str = ""

    @property
    def category_slug(self) -> str:
        """English slug of the category (fact, evidence, ...)."""
        cat = Category.parse(self.category)
        return cat.slug if cat else self.category


# --- defaults derived from the category ------------------------------------------

_IMPORTANCE_BASE: dict[Category, float] = {
    Category.CLAIM: 0.8,
    Category.EVIDENCE: 0.75,
    Category.PREFERENCE: 0.7,
    Category.FACT: 0.65,
    Category.LAW: 0.6,
    Category.ACTION: 0.55,
}


def default_memory_type(category: Category, dates: list[str]) -> str:
    """AdaMem type: preferences are attributes, dated facts are events, the rest facts."""
    if category is Category.PREFERENCE:
        return "attribute"
    if category is Category.FACT and dates:
        return "event"
    return "fact"


def default_scope(category: Category) -> str:
    """Most likely layer: preferences → user_profile, statutes → general_law, else case."""
    if category is Category.PREFERENCE:
        return "user_profile"
    if category is Category.LAW:
        return "general_law"
    return "case"


def settle_category(category: Category, content: str) -> Category:
    """Categories decide layers, so a label that would publish advice as law is corrected:
    a 法条 item that gives advice is an action item (行动建议)."""
    if category is Category.LAW and is_advice(content):
        return Category.ACTION
    return category


def scope_for(category: Category, content: str, hint: object = None) -> str:
    """The layer of an item. Only a genuine statute or rule (category 法条, citing one, not
    advice) may go to the firm-wide general_law layer, whatever the extractor hinted;
    otherwise the hint if valid, else the category's default."""
    law_ok = category is Category.LAW and cites_statute(content) and not is_advice(content)
    if hint == "general_law" or (hint not in SCOPES and category is Category.LAW):
        if law_ok:
            return "general_law"
        return "case" if category is Category.LAW else default_scope(category)
    if hint in SCOPES:
        return str(hint)
    return default_scope(category)


def importance_for(category: Category, dates: list[str], amounts: list[str], law_refs: list[str]) -> float:
    """Importance by category, raised when the item pins down a date, an amount or a statute."""
    score = _IMPORTANCE_BASE[category]
    score += 0.05 if dates else 0.0
    score += 0.1 if amounts else 0.0
    score += 0.05 if law_refs else 0.0
    return round(min(score, 0.95), 2)


def item_tags(category: Category, topic: str | None, dates: list[str], amounts: list[str]) -> list[str]:
    """Broad tags of a note: its category, the dispute topic, and whether it carries a date or amount."""
    tags = [category.zh]
    if topic:
        tags.append(topic)
    if dates:
        tags.append("时间线")
    if amounts:
        tags.append("金额")
    return tags


# --- text hygiene -------------------------------------------------------------------

_DROP_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "So", "Sk"})
_KEEP = frozenset("\n\t")
_KEEP_SYMBOLS = frozenset("℃№©®°")


def clean_text(text: str, *, keep_newlines: bool = False) -> str:
    """Remove control, format, unassigned and emoji/symbol characters and collapse spaces.

    NUL and lone surrogates would be rejected by PostgreSQL; zero-width and
    emoji characters only add noise to keywords. Currency signs and CJK
    punctuation are kept. Newlines survive when ``keep_newlines`` (sentence
    splitting uses them), otherwise they become spaces.
    """
    if not text:
        return ""
    chars: list[str] = []
    for ch in text:
        if ch in _KEEP or ch == "\r":
            chars.append("\n" if keep_newlines and ch != "\t" else " ")
        elif ch.isascii() and ch.isprintable():
            chars.append(ch)
        elif ch in _KEEP_SYMBOLS:
            chars.append(ch)
        elif "\ufe00" <= ch <= "\ufe0f" or "\U000e0100" <= ch <= "\U000e01ef":
            continue  # variation selectors left over from emoji
        elif unicodedata.category(ch) not in _DROP_CATEGORIES:
            chars.append(ch)
    cleaned = "".join(chars)
    cleaned = re.sub(r"[ \u3000\u00a0]+", " ", cleaned)
    if keep_newlines:
        cleaned = re.sub(r" *\n[ \n]*", "\n", cleaned)
    return cleaned.strip()


# --- validation of raw extractor output --------------------------------------------


def _float_in_unit(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    if math.isnan(value) or not 0.0 <= value <= 1.0:
        return None
    return value


def _str_list(value: Any, limit: int = 12) -> list[str] | None:
    if not isinstance(value, list):
        return None
    out = [clean_text(v)[:50] for v in value if isinstance(v, str) and clean_text(v)]
    return list(dict.fromkeys(out))[:limit]


#: Order of the speakers when the five-item limit chooses: the client's own words first.
_SPEAKER_RANK: dict[str, int] = {"user": 0, "turn": 1, "assistant": 2}
#: Categories whose "用户" is not the client: a statute names nobody, and a preference belongs
#: to the profile of the product's user.
UNNAMED_CATEGORIES: frozenset[Category] = frozenset({Category.LAW, Category.PREFERENCE})


@dataclass
class _Candidate:
    """An item that passed the checks, waiting for the five-item limit."""

    index: int
    entry: dict[str, Any]
    content: str
    category: Category
    speaker: str

    @property
    def rank(self) -> tuple[int, float, float, int]:
        """Sort key, most important first: the client's words, then the category's weight,
        then the item's importance (given, or derived as for a note), then the order given."""
        importance = _float_in_unit(self.entry.get("importance"))
        if importance is None:
            importance = importance_for(
                self.category, lexicon.extract_dates(self.content), lexicon.extract_amounts(self.content),
                lexicon.extract_law_refs(self.content),
            )
        return (_SPEAKER_RANK[self.speaker], -_IMPORTANCE_BASE[self.category], -importance, self.index)


def _speaker(entry: dict[str, Any], turn: TurnText | None) -> str:
    """Who said the item: everything is the user's when the turn has no reply, otherwise the
    extractor's "speaker" when valid, else "turn" (both messages)."""
    if turn is not None and not turn.reply.strip():
        return "user"
    speaker = entry.get("speaker")
    return speaker if speaker in SPEAKERS else "turn"


def with_repealed_law_noted(content: str, category: Category, speaker: str, turn: TurnText) -> tuple[str, Category]:
    """A 法条 item citing a law repealed before the turn was said ("《合同法》第四十条…" after
    2021) is its speaker's statement, not law in force: filed as 行动建议 when the assistant
    said it, as 事实 when a person did, with the repeal said beside it."""
    found = repealed(content, turn.said_on) if category is Category.LAW else None
    if found is None:
        return content, category
    citation, successor, _ = found
    remark = f"（注：《{citation.title}》已废止，现行为《{successor}》。）"
    if remark not in content:
        content = content[: MAX_CONTENT_CHARS - len(remark)] + remark
    person = speaker == "user" or turn.reply_is_person
    return content, Category.FACT if person else Category.ACTION


def true_to_turn(item: ExtractedItem, turn: TurnText) -> ExtractedItem | None:
    """The offline engine's item as the LLM path leaves one: the client called by name
    (``with_names``), a repealed statute noted (``with_repealed_law_noted``), the rules of both
    engines applied (``rules.offline_answer``: None when one refuses it)."""
    category = given = Category.parse(item.category) or Category.FACT
    content = item.content if category in UNNAMED_CATEGORIES else with_names(item.content, turn)[:MAX_CONTENT_CHARS]
    answered = offline_answer(content, category, item.speaker, turn)
    if answered is not None:
        rule, answer = answered
        if isinstance(answer, Refusal):
            logger.info("offline item refused: %s [%s]", answer.detail, rule.name)
            return None
        if isinstance(answer, Category):
            category = answer
    content, settled = with_repealed_law_noted(content, category, item.speaker, turn)
    if content == item.content and settled is given:
        return item
    return replace(item, content=content, category=settled.zh)


def most_important(items: list[ExtractedItem], limit: int) -> tuple[list[ExtractedItem], list[ExtractedItem]]:
    """The ``limit`` most important of ``items`` in their order, and the rest: the client's
    words first, then the category's weight, then the item's importance (as ``_Candidate.rank``)."""
    def rank(position: int) -> tuple[int, float, float, int]:
        item = items[position]
        category = Category.parse(item.category) or Category.FACT
        return (_SPEAKER_RANK.get(item.speaker, 1), -_IMPORTANCE_BASE[category], -item.importance, position)

    order = sorted(range(len(items)), key=rank)
    kept = sorted(order[:limit])
    return [items[i] for i in kept], [items[i] for i in order[limit:]]


def validate_items(
    raw: list[dict[str, Any]], *, source_text: str = "", turn: TurnText | None = None
) -> tuple[list[ExtractedItem], list[str]]:
    """Check raw extractor items and turn the good ones into ``ExtractedItem``.

    Content is cleaned of control characters, stripped and cut to 1000 characters;
    categories go through a small alias table. Each item then passes the extraction rules
    (``rules``: the table of ``memory.rules`` that ``manage.py rules`` lists), stage by stage;
    with the ``turn`` the items came from, it also gets its speaker and the name of the person
    the turn names (``with_names``) before the rules that read the turn. Of the items left, the
    five most important are kept (``_Candidate.rank``), in the order given. Missing fields
    (type, scope, keywords, ...) are derived from the content and category; fields the
    extractor did give are used when valid. ``source_text`` (the turn, by default the
    ``turn``'s text) only helps name the dispute topic for the context.

    Returns the kept items and one human-readable reason per item refused or dropped, in
    item order; a refusal ends with the name of the rule that refused it ("… [content-present]").
    """
    reasons: list[tuple[int, str]] = []
    candidates: list[_Candidate] = []
    seen: set[str] = set()
    if not isinstance(raw, list):
        return [], [f"expected a list of items, got {type(raw).__name__}"]
    if turn is not None and not source_text:
        source_text = turn.said_by("turn")
    turn_topic = lexicon.detect_topic(source_text[:20_000]) if source_text else None
    for index, entry in enumerate(raw, start=1):
        item = ItemCheck(index, entry, turn=turn, seen=seen)
        refused = run_stage(ENTRY, item)
        if refused is None:
            content = entry.get("content")
            # Cut before cleaning so a megabyte of content costs no more than a page.
            item.content = clean_text(content[: MAX_CONTENT_CHARS * 4])[:MAX_CONTENT_CHARS].strip() if content else ""
            item.category = Category.parse(entry.get("category"))
            refused = run_stage(CONTENT, item)
        if refused is None:
            item.speaker = _speaker(entry, turn)
            if turn is not None and item.category not in UNNAMED_CATEGORIES:
                if item.speaker == "user":  # the client's "我" ("现在还欠着我") is the client, named below
                    item.content = third_person(item.content, "user")
                item.content = with_names(item.content, turn)[:MAX_CONTENT_CHARS]
            refused = run_stage(TURN, item)
        if refused is not None:
            rule, refusal = refused
            reasons.append((index, f"{refusal.detail} [{rule.name}]"))
            continue
        content, category, speaker = item.content, item.category, item.speaker
        if turn is not None:
            content, category = with_repealed_law_noted(content, category, speaker, turn)
        seen.add(content_key(item.content))
        candidates.append(_Candidate(index, entry, content, settle_category(category, content), speaker))
    ranked = sorted(candidates, key=lambda c: c.rank)
    kept, dropped = ranked[:MAX_ITEMS_PER_TURN], ranked[MAX_ITEMS_PER_TURN:]
    if dropped:
        least = kept[-1]
        for candidate in dropped:
            reasons.append((candidate.index, (
                f"dropped: over the limit of {MAX_ITEMS_PER_TURN} items per turn, less important than "
                f"item {least.index} ({least.speaker}, {least.category.zh}), the least kept: "
                f"{snippet(candidate.content)!r}"
            )))
    items = [
        _complete(c.entry, c.content, c.category, turn_topic, c.speaker)
        for c in sorted(kept, key=lambda c: c.index)
    ]
    return items, [f"item {index}: {reason}" for index, reason in sorted(reasons, key=lambda r: r[0])]


def _complete(
    entry: dict[str, Any], content: str, category: Category, turn_topic: str | None, speaker: str
) -> ExtractedItem:
    """Build an item from validated content/category, deriving what the entry lacks."""
    category = settle_category(category, content)
    dates = _str_list(entry.get("dates")) or lexicon.extract_dates(content)
    amounts = _str_list(entry.get("amounts")) or lexicon.extract_amounts(content)
    memory_type = entry.get("memory_type")
    if memory_type not in MEMORY_TYPES:
        memory_type = default_memory_type(category, dates)
    scope = scope_for(category, content, entry.get("scope_hint"))
    confidence = _float_in_unit(entry.get("confidence"))
    importance = _float_in_unit(entry.get("importance"))
    topic = None if category is Category.PREFERENCE else lexicon.topic_for(content, turn_topic)
    item = ExtractedItem(
        content=content,
        category=category.zh,
        memory_type=memory_type,
        confidence=DEFAULT_LLM_CONFIDENCE if confidence is None else round(confidence, 3),
        keywords=_str_list(entry.get("keywords")) or lexicon.keywords_for(content),
        tags=_str_list(entry.get("tags")) or item_tags(category, topic, dates, amounts),
        context="",
        importance=(
            importance_for(category, dates, amounts, lexicon.extract_law_refs(content))
            if importance is None
            else round(importance, 3)
        ),
        scope_hint=scope,
        dates=dates,
        amounts=amounts,
        speaker=speaker,
    )
    context = entry.get("context")
    item.context = clean_text(context)[:200] if isinstance(context, str) and clean_text(context) else (
        lexicon.context_for(item)
    )
    return item
