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
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.db import connection, transaction
from pgvector.django import CosineDistance

from remember.extraction import ExtractedItem, keywords_for
from memory.models import (
    Category,
    LinkType,
    MemoryScope,
    MemoryType,
    Note,
    PersonaTrait,
    RoutingDecision,
)
from remember.decisions import record_decision, recorded_decision
from remember.drafts import TurnSource, category_slug, is_persona_item
from remember.routing import conflict_between, lexical_overlap
from remember.routing import thresholds
from memory.services.notes import (
    NoteDraft,
    content_hash,
    create_note,
    evolve_note,
    link_notes,
    record_mention,
    supersede_note,
)
from memory.services.persona import (
    persona_evidence_create,
    persona_trait_create,
    persona_trait_decide,
    persona_trait_refresh,
)

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


def time_decay(last_evidence_at: datetime | None, now: datetime) -> float:
    """0.5 per half-life elapsed since the latest evidence (1.0 for evidence in the future)."""
    if last_evidence_at is None:
        return 0.0
    days = max(0.0, (now - last_evidence_at).total_seconds() / 86400.0)
    return 0.5 ** (days / PERSONA_HALF_LIFE_DAYS)


def persona_strength(base_confidence: float, mentions: int, last_evidence_at: datetime | None, now: datetime) -> float:
    """AdaMem persona strength: base_confidence × ln(mentions + 1) × time_decay."""
    return base_confidence * math.log(mentions + 1) * time_decay(last_evidence_at, now)


def trait_strength(trait: PersonaTrait, now: datetime) -> float:
    return persona_strength(trait.base_confidence, trait.evidence_count, trait.last_evidence_at, now)


def qualifies(strength: float, evidence_count: int) -> bool:
    """Promotion rule (rounded to 6 places so a strength of exactly 0.65 counts)."""
    return round(strength, 6) >= PERSONA_PROMOTION_STRENGTH and evidence_count >= PERSONA_MIN_EVIDENCE


@dataclass
class _Match:
    trait: PersonaTrait
    similarity: float


def _nearest_traits(firm, user, embedding: np.ndarray, k: int = 5) -> list[_Match]:
    rows = (
        PersonaTrait.objects.filter(firm=firm, user=user)
        .exclude(status=PersonaTrait.Status.SUPERSEDED)
        .filter(embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", embedding))
        .order_by("distance")[:k]
    )
    return [_Match(t, 1.0 - float(t.distance)) for t in rows]


def record_persona_item(
    item: ExtractedItem,
    embedding: np.ndarray,
    source: TurnSource,
    *,
    actor,
    item_index: int,
    turn=None,
    consolidation=None,
) -> RoutingDecision:
    """Add one preference/attribute statement as evidence, then promote or reinforce. One
    transaction, recorded as a PERSONA routing decision (idempotent per source and text)."""
    conversation = source.conversation
    user, firm = conversation.user, conversation.firm
    fingerprint = content_hash(item.content)
    messages = source.messages_for(item.speaker)
    said_at = messages[0].said_at if messages else conversation.created_at
    with transaction.atomic():
        _persona_lock(firm, user)
        existing = recorded_decision(source.source_key, fingerprint)
        if existing is not None:
            return existing
        trait, how = _trait_for(item, embedding, firm, user)
        persona_evidence_create(
            trait=trait,
            firm=firm,
            user=user,
            source_key=source.source_key,
            content=item.content,
            content_hash=fingerprint,
            confidence=item.confidence,
            said_at=said_at,
            source_message_ids=[m.pk for m in messages],
            conversation=conversation,
        )
        _refresh_stats(trait, now=said_at)
        outcome, note = _promote_or_reinforce(trait, source, item, actor=actor, now=said_at)
        return record_decision(
            firm=firm,
            owner=user,
            source_key=source.source_key,
            turn=turn,
            consolidation=consolidation,
            item_index=item_index,
            content=item.content,
            content_hash=fingerprint,
            category=category_slug(item),
            action=RoutingDecision.Action.PERSONA,
            reason=f"{how}; {outcome}"[:500],
            note=note,
        )


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


def _persona_lock(firm, user) -> None:
    """One user's persona changes one statement at a time (across workers)."""
    key = hashlib.sha256(f"persona:{firm.pk}:{user.pk}".encode()).digest()[:8]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(key, "big", signed=True)])


def _trait_for(item: ExtractedItem, embedding: np.ndarray, firm, user) -> tuple[PersonaTrait, str]:
    """The trait this statement supports, a new trait contrary to an existing one, or a new trait."""
    for match in _nearest_traits(firm, user, embedding):
        overlap = lexical_overlap(item.content, match.trait.content)
        conflict = conflict_between(item.content, match.trait.content)
        if match.similarity >= thresholds.ROUTING_CONFLICT_SIMILARITY and overlap[1] >= 0.5 and conflict:
            contrary = (
                PersonaTrait.objects.filter(conflicts_with=match.trait, firm=firm, user=user)
                .exclude(status=PersonaTrait.Status.SUPERSEDED)
                .first()
            )
            if contrary is not None and conflict_between(item.content, contrary.content) is None:
                return contrary, f"evidence for a trait contrary to another ({conflict})"
            trait = persona_trait_create(
                firm=firm, user=user, content=item.content, category=category_slug(item),
                embedding=embedding, conflicts_with=match.trait,
            )
            return trait, f"contrary to trait {match.trait.pk} ({conflict})"
        if match.similarity >= SAME_TRAIT_SIMILARITY and overlap[0] >= SAME_TRAIT_MIN_OVERLAP:
            return match.trait, f"same trait as {match.trait.pk} (cosine {match.similarity:.3f})"
    trait = persona_trait_create(
        firm=firm, user=user, content=item.content, category=category_slug(item), embedding=embedding
    )
    return trait, "new trait"


def _refresh_stats(trait: PersonaTrait, *, now: datetime) -> None:
    evidence = list(trait.evidence.all())
    # The trait reads as its most recent, most confident statement; its strength is computed
    # from the new figures (trait_strength reads them from the trait).
    latest = max(evidence, key=lambda e: (e.said_at, e.confidence))
    trait.evidence_count = len(evidence)
    trait.base_confidence = sum(e.confidence for e in evidence) / len(evidence)
    trait.last_evidence_at = max(e.said_at for e in evidence)
    persona_trait_refresh(
        trait, evidence_count=trait.evidence_count, base_confidence=trait.base_confidence,
        last_evidence_at=trait.last_evidence_at, content=latest.content, strength=round(trait_strength(trait, now), 6),
    )


def _promote_or_reinforce(trait: PersonaTrait, source: TurnSource, item: ExtractedItem, *, actor, now: datetime):
    """Apply the promotion rule and the conflict policy; return (reason, note or None)."""
    threshold = f"strength {trait.strength:.3f} (≥ {PERSONA_PROMOTION_STRENGTH}?), evidence {trait.evidence_count}/{PERSONA_MIN_EVIDENCE}"
    if trait.note_id is not None and trait.status in (PersonaTrait.Status.PROMOTED, PersonaTrait.Status.DISPUTED):
        note = record_mention(trait.note, actor=actor, source=source.source_key, confidence=item.confidence,
                              source_message_ids=[m.pk for m in source.messages_for(item.speaker)])
        persona_trait_decide(trait, f"reinforced profile note; {threshold}")
        return trait.decision, note
    if not qualifies(trait.strength, trait.evidence_count):
        persona_trait_decide(trait, f"not promoted yet: {threshold}")
        return trait.decision, None
    old = trait.conflicts_with
    old_note = old.note if old is not None and old.note_id and old.note.status == Note.Status.ACTIVE else None
    if old_note is None:
        note = _profile_note(trait, source, actor=actor)
        persona_trait_decide(trait, f"promoted: {threshold}", status=PersonaTrait.Status.PROMOTED, note=note)
        return trait.decision, note
    old_strength = trait_strength(old, now)
    if trait.strength > old_strength + PERSONA_TIE_MARGIN:
        note = _profile_note(trait, source, actor=actor)
        reason = f"persona update: new trait stronger ({trait.strength:.3f} > {old_strength:.3f})"
        supersede_note(old_note, note, actor=actor, reason=reason)
        persona_trait_decide(old, reason, status=PersonaTrait.Status.SUPERSEDED)
        persona_trait_decide(trait, reason, status=PersonaTrait.Status.PROMOTED, note=note)
        return reason, note
    if abs(trait.strength - old_strength) <= PERSONA_TIE_MARGIN:
        note = _profile_note(trait, source, actor=actor, tags=[DISPUTED_TAG])
        reason = f"disagreement kept: strengths {trait.strength:.3f} vs {old_strength:.3f} are within {PERSONA_TIE_MARGIN}"
        link_notes(note, old_note, link_type=LinkType.CONTRADICTS, weight=1.0, actor=actor, reason=reason)
        evolve_note(old_note, actor=actor, triggered_by=note, tags=[DISPUTED_TAG])
        persona_trait_decide(trait, reason, status=PersonaTrait.Status.DISPUTED, note=note)
        persona_trait_decide(old, reason, status=PersonaTrait.Status.DISPUTED)
        return reason, note
    persona_trait_decide(
        trait, f"ignored for now: weaker than the current profile ({trait.strength:.3f} < {old_strength:.3f})"
    )
    return trait.decision, None


def _profile_note(trait: PersonaTrait, source: TurnSource, *, actor, tags: list[str] | None = None) -> Note:
    evidence = list(trait.evidence.all())
    message_ids = list(dict.fromkeys(i for e in evidence for i in e.source_message_ids))
    item_tags = source.note_tags(["偏好", "用户画像", *(tags or [])])
    draft = NoteDraft(
        firm=trait.firm,
        content=trait.content,
        memory_scope=MemoryScope.USER_PROFILE,
        category=trait.category if trait.category in Category.values else Category.PREFERENCE,
        source_type=source.source_type,
        memory_type=MemoryType.ATTRIBUTE,
        keywords=[],
        tags=item_tags,
        context=f"用户画像：由 {len(evidence)} 条证据归纳的偏好",
        importance=0.7,
        confidence=round(min(1.0, trait.base_confidence), 4),
        owner=trait.user,
        conversation=source.conversation,
        source_id=source.source_id if source.named else f"persona:{trait.pk}",
        source_message_ids=message_ids,
        speaker=source.conversation.user.get_username(),
        said_at=trait.last_evidence_at,
    )
    draft.keywords = keywords_for(trait.content)
    note = create_note(draft, actor=actor, embedding=np.asarray(trait.embedding, dtype=np.float32))
    if len(evidence) > 1:
        note = record_mention(note, actor=actor, source=None, mentions=len(evidence), event="promoted",
                              reason="persona promotion: mentions = evidence count",
                              details={"evidence": [e.pk for e in evidence]})
    return note
