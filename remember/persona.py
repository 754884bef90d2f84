"""Persona memory (docs/memory-model.md, AdaMem persona): a user's preferences and attributes gathered as
evidence, promoted to a ``user_profile`` note only once they are strong and repeated.

    strength = base_confidence × ln(mentions + 1) × time_decay
    time_decay = 0.5 ** (days since the latest evidence / PERSONA_HALF_LIFE_DAYS)   (90 days)

``base_confidence`` is the mean confidence of the trait's evidence, ``mentions`` the number
of evidence items, and the age is measured at the time of the statement being processed
(so an imported transcript decays by its own clock, not by today's). A trait is promoted
when strength ≥ ``PERSONA_PROMOTION_STRENGTH`` (0.65) **and** it has at least
``PERSONA_MIN_EVIDENCE`` (3) pieces of evidence — with confidence 0.8 one mention gives 0.55
and two give 0.88, so the evidence count is what keeps one remark from becoming a profile.

Contrary evidence (similar statement, opposite negation or numbers) forms its own trait
marked ``conflicts_with`` the old one. When it qualifies for promotion it is weighed against
the old trait at the same moment: stronger by more than ``PERSONA_TIE_MARGIN`` → UPDATE (the
old profile note is superseded, history kept); within the margin → both kept, joined by a
``contradicts`` link and tagged 存在分歧; weaker → ignored for now (evidence is kept).
Further evidence for a promoted trait reinforces its note (mention count, confidence moves
0.9 × old + 0.1 × new).

This module is the policy: the strength, the promotion rule, its constants, the nearest traits,
the episodic twins. The action that applies it and writes the rows is
``remember.services.persona.do_record_persona_statement``.
"""
from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from pgvector.django import CosineDistance

from memory.models import Category, MemoryScope, MemoryType, PersonaTrait
from remember.drafts import TurnSource, is_persona_item
from remember.extraction import ExtractedItem, keywords_for

# Tuning constants: they decide what becomes a profile, so they are code, changed with the
# evaluation that justifies them; tests monkeypatch them (docs/configuration.md).
#: Strength a trait needs to be promoted to a user_profile note ...
PERSONA_PROMOTION_STRENGTH = 0.65
#: ... with at least this many pieces of evidence.
PERSONA_MIN_EVIDENCE = 3
#: Evidence loses half its weight in this many days.
PERSONA_HALF_LIFE_DAYS = 90.0
#: Contrary traits closer in strength than this are both kept, marked as a disagreement.
PERSONA_TIE_MARGIN = 0.05
#: Two statements are the same trait when this similar (cosine) and lexically close.
SAME_TRAIT_SIMILARITY = 0.95
SAME_TRAIT_MIN_OVERLAP = 0.6
DISPUTED_TAG = "存在分歧"


def time_decay(last_evidence_at: datetime | None, now: datetime, *,
               half_life_days: float = PERSONA_HALF_LIFE_DAYS) -> float:
    """0.5 per half-life elapsed since the latest evidence (1.0 for evidence in the future)."""
    if last_evidence_at is None:
        return 0.0
    days = max(0.0, (now - last_evidence_at).total_seconds() / 86400.0)
    return 0.5 ** (days / half_life_days)


def persona_strength(base_confidence: float, mentions: int, last_evidence_at: datetime | None, now: datetime) -> float:
    """AdaMem persona strength: base_confidence × ln(mentions + 1) × time_decay."""
    return base_confidence * math.log(mentions + 1) * time_decay(last_evidence_at, now)


def trait_strength(trait: PersonaTrait, now: datetime) -> float:
    return persona_strength(trait.base_confidence, trait.evidence_count, trait.last_evidence_at, now)


def qualifies(strength: float, evidence_count: int, *, min_evidence: int = PERSONA_MIN_EVIDENCE) -> bool:
    """Promotion rule (rounded to 6 places so a strength of exactly 0.65 counts)."""
    return round(strength, 6) >= PERSONA_PROMOTION_STRENGTH and evidence_count >= min_evidence


@dataclass
class TraitMatch:
    trait: PersonaTrait
    similarity: float


def nearest_traits(firm, user, embedding: np.ndarray, k: int = 5) -> list[TraitMatch]:
    """The user's ``k`` live traits nearest to ``embedding``, with their cosine similarity."""
    rows = (
        PersonaTrait.objects.filter(firm=firm, user=user)
        .exclude(status=PersonaTrait.Status.SUPERSEDED)
        .filter(embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", embedding))
        .order_by("distance")[:k]
    )
    return [TraitMatch(t, 1.0 - float(t.distance)) for t in rows]


#: A twin reports a statement the person certainly made; it clears routing's ADD bar.
TWIN_MIN_CONFIDENCE = 0.75
TWIN_IMPORTANCE = 0.5
_LABEL_PREFIX = re.compile(r"^(?P<owner>[^：。，]{1,12}?)(?:偏好|诉求)：")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def episodic_twins(items: list[ExtractedItem], source: TurnSource) -> list[ExtractedItem]:
    """One episodic event note per persona item, so nothing said is swallowed by persona
    evidence that may never be promoted ("她看到了自己最喜欢的企鹅" is an event of that
    day as well as a hint of taste). The twin reports that it was said ("当事人提到：……", with
    the owner its label names; "Caroline said: …"), which gives it a content (and routing key) of its own; the day
    is on the note (``said_at``), not in its text, so the same remark made again is a
    duplicate mention rather than a conflicting fact. Deterministic, so a resumed job
    routes the same twins."""
    twins: list[ExtractedItem] = []
    for item in items:
        if not is_persona_item(item):
            continue
        messages = source.messages_for(item.speaker)
        name = (messages[0].speaker if messages else "") or source.conversation.user.get_username()
        label = _LABEL_PREFIX.match(item.content)
        body = item.content[label.end():] if label else item.content
        owner = label.group("owner") if label else "当事人"  # never the login (issue 50)
        said = f"{owner}提到{body[len(owner):]}" if body.startswith(owner) else f"{owner}提到：{body}"
        who = "The client" if re.search(r"[_\d@]", name) else name  # a login names an account, not a party
        content, said_tag = (said, "原话") if _CJK.search(body) else (f"{who} said: {body}", "said")
        twins.append(dataclasses.replace(
            item,
            # a wish of how to be reached or answered stays a preference in the matter too (the
            # note-truth readers judged "当事人提到：有事发消息就行" filed as 事实 the wrong kind)
            category=Category.PREFERENCE.zh if item.category == Category.PREFERENCE.zh else Category.FACT.zh,
            content=content,
            memory_type=MemoryType.EVENT,
            confidence=max(item.confidence, TWIN_MIN_CONFIDENCE),
            keywords=keywords_for(content),
            tags=[*dict.fromkeys([*item.tags, said_tag])],
            importance=TWIN_IMPORTANCE,
            scope_hint=MemoryScope.CASE,
        ))
    return twins
