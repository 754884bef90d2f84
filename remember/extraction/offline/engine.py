"""The engine: from one turn to at most five items, classified where the rules can tell
and reported as what was said where they cannot."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import date

import legaltext
from memory.categories import Category

from .. import lexicon
from ..english import cues as english_cues
from ..english import rewrite as english_rewrite
from ..english import stopwords as english_stopwords
from ..items import (
    MAX_ITEMS_PER_TURN,
    ExtractedItem,
    clean_text,
    content_key,
    default_memory_type,
    default_scope,
    importance_for,
    item_tags,
)
from ..grounding import only_announces
from ..prompt import is_trivial_turn
from ..quoting import proposed_wording_quoted
from .corrections import correction_statement
from .text import CJK_RE, LATIN_WORD_RE, TRAILING_PUNCT_RE, is_english
from .units import Scores, Unit, score, units_of
from .wording import (
    Voice,
    chinese_name,
    english_name,
    english_tags,
    finish,
    finish_english,
    third_person_zh,
    voices,
    with_resolved_chinese_dates,
    with_resolved_dates,
    with_subject,
)

#: Characters read from each side of a turn (see the module docstring).
MAX_INPUT_CHARS = 20_000
#: Shortest note worth keeping ("商家不给退" is five characters).
MIN_UNIT_CHARS = 5
#: At most this many of a turn's items may come from the assistant's reply.
MAX_REPLY_ITEMS = 3
#: The only categories taken from the assistant's reply: its restatements of
#: the user's facts would duplicate them, its hedged guesses are not facts.
REPLY_CATEGORIES: frozenset[str] = frozenset({Category.LAW.zh, Category.ACTION.zh})
#: Confidence of a note that reports what a person said ("Caroline said they …"): the words
#: are theirs, only the pronouns were rewritten, so it clears the ADD bar (> 0.7); what the
#: rules could not tell is the category, which is why its importance is low.
SAID_CONFIDENCE = 0.75
#: Importance of a reported statement the rules could not classify.
SAID_IMPORTANCE = 0.3
#: A classified statement at or below this confidence is kept as what was said instead:
#: routing would drop it as low quality, and its words are certain even if its category is not.
WEAK_CONFIDENCE = 0.7
#: Tag of a note that reports what a Chinese speaker said.
SAID_TAG_ZH = "原话"
#: Content words an English statement needs to be more than small talk.
_MIN_SAID_WORDS = 2


_ADVISED_RE = re.compile(r"recommend|suggest|advise", re.IGNORECASE)
#: What reads a person's sentences' acts (``remember.extraction.act_model.read_acts``): texts in,
#: (act, probability) out, or None when it cannot read them.
ActReader = Callable[[list[str]], "list[tuple[str, float]] | None"]
#: The least probability the act reader must give a sentence the lexicon could not classify to
#: file it under its act (calibrated on the dev splits of the note-truth set, docs/evaluation.md).
ACT_MIN_PROBABILITY = 0.8
#: The category each act is filed under; a fact stays what was said.
ACT_CATEGORIES: dict[str, Category] = {"wish": Category.CLAIM, "plan": Category.ACTION,
                                       "preference": Category.PREFERENCE}
#: Confidence of a note filed by the act reader: above the ADD bar (> 0.7), below a cued one.
ACT_CONFIDENCE = 0.74
#: The shortest sentence the act reader reads: a fragment ("Freelance UI designer.", "她谈完会告诉我")
#: reads as anything (the dev splits' fragments read as preferences).
ACT_MIN_CJK_CHARS = 11
ACT_MIN_ENGLISH_WORDS = 5


@dataclass
class _Candidate:
    """A classified item, where it was said, by whom, and the text it came from."""

    item: ExtractedItem
    position: int
    voice: Voice
    text: str = ""


def _confidence(
    scores: Scores, category: str, runner_up: int, *, asked: bool, speaker: str, correction: bool = False
) -> float:
    """Confidence by rule strength: a strong cue with a date, amount or statute
    ≥ 0.8, two strong cues 0.8, one 0.72, a date / amount / statute alone 0.75, weak
    cues only 0.6–0.65; lowered when another category scores as high, for statements
    inside a question and for the assistant's words; raised for an explicit correction."""
    n_strong = scores.strong[category]
    entity = bool(scores.dates or scores.amounts or scores.law_refs)
    if n_strong and entity:
        value = 0.8 + 0.05 * min(n_strong - 1, 2)
    elif n_strong >= 2:
        value = 0.8
    elif n_strong == 1:
        value = 0.72
    elif entity:
        value = 0.75  # a concrete date, amount or statute is worth keeping (ADD needs > 0.7)
    else:
        value = 0.65 if scores.points[category] >= 4 else 0.6
    if runner_up >= scores.points[category]:
        value -= 0.05
    if asked:
        value -= 0.05
    if speaker == "assistant":
        value -= 0.05
    if correction:
        value += 0.1  # "之前说错了，应该是…": the user corrects a stored fact; it must win the UPDATE
    return round(min(max(value, 0.3), 0.95), 2)


def _candidate(
    unit: Unit, voice: Voice, position: int, turn_topic: str | None, said_on: date | None
) -> _Candidate | None:
    """Turn one unit into a scored item, or None when the rules cannot tell what it is."""
    if len(unit.text) < MIN_UNIT_CHARS or not (CJK_RE.search(unit.text) or LATIN_WORD_RE.search(unit.text)):
        return None
    scores = score(unit.text)
    allowed = None if voice.person else REPLY_CATEGORIES
    ranked = scores.ranked(allowed)
    category = ranked[0]
    points = scores.points[category]
    if points < 2 or (not voice.person and not scores.strong[category]):
        return None
    if not scores.decisive(category) and points < 3 and not (scores.dates or scores.amounts):
        return None
    others = [scores.points[c] for c in scores.ranked() if c != category]
    confidence = _confidence(
        scores, category, max(others, default=0), asked=unit.from_question,
        speaker="user" if voice.person else "assistant",
        correction=bool(lexicon.CORRECTION_RE.search(unit.text)),
    )
    return _filed(unit, voice, position, Category.parse(category), scores, confidence, turn_topic, said_on)


def _filed(
    unit: Unit, voice: Voice, position: int, cat: Category, scores: Scores, confidence: float,
    turn_topic: str | None, said_on: date | None,
) -> _Candidate:
    """``unit`` worded as a note of category ``cat``, with its tags, layer and importance."""
    english = is_english(unit.text)
    content, dates = _worded(unit.text, cat, voice, scores.dates, said_on, unit.year_before)
    scope = default_scope(cat)
    if voice.person and voice.speaker != "user" and scope == "user_profile":
        scope = "case"  # a second speaker's taste is not the user's profile
    item = ExtractedItem(
        content=content,
        category=cat.zh,
        memory_type=default_memory_type(cat, dates),
        confidence=confidence,
        keywords=[],
        tags=[],
        context="",
        importance=importance_for(cat, dates, scores.amounts, scores.law_refs),
        scope_hint=scope,
        dates=dates,
        amounts=scores.amounts,
        speaker=voice.speaker,
    )
    if english:
        item.tags = english_tags(cat, dates, scores.amounts)
        if cat is Category.PREFERENCE and english_cues.ANSWER_STYLE_RE.search(unit.text):
            item.tags.append("answer style")
    else:
        topic = None if cat is Category.PREFERENCE else lexicon.topic_for(unit.text, turn_topic)
        item.tags = item_tags(cat, topic, dates, scores.amounts)
        if cat is Category.PREFERENCE and lexicon.ANSWER_STYLE_RE.search(unit.text):
            item.tags.append("回答方式")
    return _Candidate(item, position, voice, unit.text)


def _by_act(
    pending: list[tuple[Voice, int, Unit]], read_acts: ActReader, turn_topic: str | None, said_on: date | None,
) -> list[_Candidate]:
    """The sentences the lexicon could not classify that the act reader reads, clearly, as a wish,
    a plan or a preference — never one that states a sum, a number or an identifier (the reader
    takes sums for wants, and a value is a fact a later correction must find)."""
    readable = [(voice, position, unit) for voice, position, unit in pending
                if _long_enough(unit.text) and not _holds_a_value(unit.text) and not only_announces(unit.text)]
    found = read_acts([unit.text for _voice, _position, unit in readable]) if readable else None
    if not found:
        return []
    filed = []
    for (voice, position, unit), (act, probability) in zip(readable, found):
        category = ACT_CATEGORIES.get(act)
        if category is not None and probability >= ACT_MIN_PROBABILITY:
            filed.append(_filed(unit, voice, position, category, score(unit.text), ACT_CONFIDENCE, turn_topic, said_on))
    return filed


def _long_enough(text: str) -> bool:
    if is_english(text):
        return len(LATIN_WORD_RE.findall(text)) >= ACT_MIN_ENGLISH_WORDS
    return len(CJK_RE.findall(text)) >= ACT_MIN_CJK_CHARS


def _holds_a_value(text: str) -> bool:
    reading = legaltext.read(text)
    return bool(reading.amounts or reading.numbers or reading.identifiers or reading.articles)


def _worded(
    text: str, category: Category, voice: Voice, dates: list[str], said_on: date | None,
    year_before: str | None = None,
) -> tuple[str, list[str]]:
    """The note's wording (third person, dates resolved beside their phrase) and its dates."""
    if is_english(text):
        content = english_rewrite.in_third_person(text, english_name(voice), voice.other, person=voice.person)
        if not voice.person and category is Category.ACTION and not _ADVISED_RE.search(content):
            content = "The assistant advised: " + content
        content, dates = with_resolved_dates(content, said_on)
        return finish_english(content), dates
    content = finish(with_subject(third_person_zh(text, voice), category.zh, voice.speaker))
    return with_resolved_chinese_dates(content, dates, said_on, year_before)


def _worth_keeping(text: str) -> bool:
    """More than small talk: two content words in English, four Chinese characters."""
    if not is_english(text):
        return len(CJK_RE.findall(text)) >= MIN_UNIT_CHARS - 1
    words = re.findall(r"[A-Za-z][A-Za-z'-]{2,29}", text)
    content_words = [w for w in words if w.lower() not in english_stopwords.STOPWORDS]
    return len(content_words) >= _MIN_SAID_WORDS


def _said_item(texts: list[str], voice: Voice, said_on: date | None) -> ExtractedItem | None:
    """What a person said that the rules could not classify, kept as one low-importance event
    in the third person: "Caroline said they …", "alice说：用户……"."""
    texts = [t for t in texts if _worth_keeping(t) and not only_announces(t)]  # "Hi again, two updates."
    if not texts:
        return None
    if not all(is_english(t) for t in texts):
        bodies = [TRAILING_PUNCT_RE.sub("", third_person_zh(t, voice)) for t in texts]
        content = finish(f"{chinese_name(voice)}说：" + "；".join(bodies))
        content, dates = with_resolved_chinese_dates(content, lexicon.extract_dates(content), said_on)
        tags = item_tags(Category.FACT, None, dates, lexicon.extract_amounts(content)) + [SAID_TAG_ZH]
    else:
        name = english_name(voice)
        bodies = [english_rewrite.reported(t, name, voice.other) for t in texts]
        body = bodies[0] + "".join("; " + b[len(name) + len(" said ") :] for b in bodies[1:])
        content, dates = with_resolved_dates(TRAILING_PUNCT_RE.sub("", body), said_on)
        content = finish_english(content)
        tags = english_tags(Category.FACT, dates, lexicon.extract_amounts(content), lexicon.SAID_TAG_EN)
    amounts = lexicon.extract_amounts(content)
    return ExtractedItem(
        content=content,
        category=Category.FACT.zh,
        memory_type="event",
        confidence=SAID_CONFIDENCE,
        keywords=[],
        tags=tags,
        context="",
        importance=round(SAID_IMPORTANCE + (0.05 if dates else 0.0) + (0.05 if amounts else 0.0), 2),
        scope_hint="case",
        dates=dates,
        amounts=amounts,
        speaker=voice.speaker,
    )


def extract_offline(
    user_msg: str,
    ai_resp: str,
    *,
    user_name: str = "",
    reply_name: str = "",
    said_on: date | None = None,
    read_acts: ActReader | None = None,
) -> list[ExtractedItem]:
    """Rule-based knowledge items of one turn, at most five, in the order they were said.

    ``user_name`` / ``reply_name`` are the speakers (a reply by "assistant" or no name is
    the product's assistant; any other name is a second person, as in an imported
    conversation between two people). ``said_on`` is the day the turn was said: English
    relative dates ("yesterday", "last Tuesday") are resolved against it.

    Nothing a person says is lost: what the lexicon classifies becomes a categorised
    note; what it cannot (or only weakly) classify becomes one low-importance event in
    the third person ("Caroline said they …"). Trivial turns, questions, greetings and
    thanks give nothing; the assistant's reply only gives statutes and advice. With ``read_acts``
    a person's sentence the lexicon cannot classify and that the act reader clearly reads as a
    wish, a plan or a preference is filed as one (``_by_act``) instead of what was said. When a
    turn holds more than five pieces, the user's statements win, higher confidence wins
    within each side, and a person's statements that do not fit are folded into that
    person's reported-speech note rather than dropped.
    """
    user_msg = user_msg if isinstance(user_msg, str) else ""
    ai_resp = ai_resp if isinstance(ai_resp, str) else ""
    if is_trivial_turn(user_msg, ai_resp):
        return []
    user_text = clean_text(user_msg[:MAX_INPUT_CHARS], keep_newlines=True)
    reply_text = clean_text(ai_resp[:MAX_INPUT_CHARS], keep_newlines=True)
    user_voice, reply_voice = voices(user_name, reply_name)
    if not reply_voice.person:  # the assistant's drafts speak for the client: kept as proposed
        reply_text = proposed_wording_quoted(reply_text)
    turn_topic = lexicon.detect_topic(user_text) or lexicon.detect_topic(reply_text)

    candidates: list[_Candidate] = []
    said: dict[Voice, list[tuple[int, str]]] = {user_voice: [], reply_voice: []}
    unclassified: list[tuple[Voice, int, Unit]] = []
    seen: set[str] = set()
    position = 0
    for voice, text in ((user_voice, user_text), (reply_voice, reply_text)):
        taken = 0
        for unit in units_of(text, whole_sentences=not voice.person):
            position += 1
            if voice.person and (corrected := correction_statement(unit.text)):
                unit = replace(unit, text=corrected)
            candidate = _candidate(unit, voice, position, turn_topic, said_on)
            if candidate is None or (voice.person and candidate.item.confidence <= WEAK_CONFIDENCE):
                if voice.person and not unit.from_question:
                    said[voice].append((position, unit.text))
                    unclassified.append((voice, position, unit))
                continue
            key = content_key(candidate.item.content)
            if key in seen:
                continue
            seen.add(key)
            candidates.append(candidate)
            taken += 1
        if not voice.person and taken > MAX_REPLY_ITEMS:
            reply = sorted(
                (c for c in candidates if c.voice is voice),
                key=lambda c: (-c.item.confidence, c.position),
            )[:MAX_REPLY_ITEMS]
            candidates = [c for c in candidates if c.voice is not voice] + reply

    if read_acts is not None and unclassified:
        for candidate in _by_act(unclassified, read_acts, turn_topic, said_on):
            if content_key(candidate.item.content) not in seen:
                seen.add(content_key(candidate.item.content))
                candidates.append(candidate)
                said[candidate.voice].remove((candidate.position, candidate.text))

    # The user's own statements come first; the reply only fills free slots.
    best = sorted(
        candidates,
        key=lambda c: (c.item.speaker != "user", -c.item.confidence, -c.item.importance, c.position),
    )
    said_items = _fit(best, said, said_on)
    chosen = sorted(
        [(c.position, c.item) for c in best] + said_items, key=lambda pair: pair[0]
    )
    items = [item for _, item in chosen]
    for item in items:
        item.keywords = lexicon.keywords_for(item.content)
        item.context = lexicon.context_for(item)
    return items


def _fit(
    best: list[_Candidate], said: dict[Voice, list[tuple[int, str]]], said_on: date | None
) -> list[tuple[int, ExtractedItem]]:
    """Trim ``best`` (in place) so that it and one reported-speech item per speaker fit in
    five; a person's statements that do not fit join that speaker's reported item."""
    while True:
        said_items = {
            voice: item for voice, texts in said.items()
            if texts and (item := _said_item([t for _, t in sorted(texts)], voice, said_on)) is not None
        }
        limit = MAX_ITEMS_PER_TURN - len(said_items)
        overflow = best[limit:]
        if not overflow:
            break
        del best[limit:]
        for candidate in overflow:
            if candidate.voice.person:
                said[candidate.voice].append((candidate.position, candidate.text))
    return [(min(p for p, _ in said[voice]), item) for voice, item in said_items.items()]

