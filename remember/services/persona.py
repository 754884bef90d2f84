"""The persona action: one statement of a preference or an attribute becomes evidence of a
trait, and the trait is promoted, reinforced, updated or kept in dispute (the policy and its
constants: ``remember.persona``).

``do_record_persona_statement`` owns the rule, the rows (``PersonaTrait``, ``PersonaEvidence``,
the profile note and its links) and its record (a PERSONA routing decision) in one transaction,
under a per-user advisory lock; the profile notes go through ``memory.services.notes``, which
audits them.
"""
from __future__ import annotations

import hashlib
from datetime import datetime

import numpy as np
from django.db import connection, transaction

from memory.models import Category, LinkType, MemoryScope, MemoryType, Note, PersonaEvidence, PersonaTrait, RoutingDecision
from memory.services.notes import (
    NoteDraft,
    content_hash,
    create_note,
    evolve_note,
    link_notes,
    record_mention,
    supersede_note,
)
from remember import persona as policy
from remember.services.decisions import record_decision, recorded_decision
from remember.drafts import TurnSource, category_slug
from remember.extraction import ExtractedItem, keywords_for
from remember.routing import conflict_between, lexical_overlap, thresholds


def do_record_persona_statement(
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
        PersonaEvidence.objects.create(
            trait=trait, firm=firm, user=user, source_key=source.source_key, content=item.content,
            content_hash=fingerprint, confidence=item.confidence, said_at=said_at,
            source_message_ids=[m.pk for m in messages], conversation=conversation,
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


def _persona_lock(firm, user) -> None:
    """One user's persona changes one statement at a time (across workers)."""
    key = hashlib.sha256(f"persona:{firm.pk}:{user.pk}".encode()).digest()[:8]
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(key, "big", signed=True)])


def _new_trait(item: ExtractedItem, embedding: np.ndarray, firm, user,
               conflicts_with: PersonaTrait | None = None) -> PersonaTrait:
    """A new trait read from ``item`` (``conflicts_with``: the trait it contradicts)."""
    fields = {"conflicts_with": conflicts_with} if conflicts_with is not None else {}
    return PersonaTrait.objects.create(firm=firm, user=user, content=item.content, category=category_slug(item),
                                       embedding=embedding, **fields)


def _trait_for(item: ExtractedItem, embedding: np.ndarray, firm, user) -> tuple[PersonaTrait, str]:
    """The trait this statement supports, a new trait contrary to an existing one, or a new trait."""
    for match in policy.nearest_traits(firm, user, embedding):
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
            trait = _new_trait(item, embedding, firm, user, conflicts_with=match.trait)
            return trait, f"contrary to trait {match.trait.pk} ({conflict})"
        if match.similarity >= policy.SAME_TRAIT_SIMILARITY and overlap[0] >= policy.SAME_TRAIT_MIN_OVERLAP:
            return match.trait, f"same trait as {match.trait.pk} (cosine {match.similarity:.3f})"
    return _new_trait(item, embedding, firm, user), "new trait"


def _refresh_stats(trait: PersonaTrait, *, now: datetime) -> None:
    """Store the trait's figures as its evidence gives them now."""
    evidence = list(trait.evidence.all())
    # The trait reads as its most recent, most confident statement; its strength is computed
    # from the new figures (trait_strength reads them from the trait).
    latest = max(evidence, key=lambda e: (e.said_at, e.confidence))
    trait.evidence_count = len(evidence)
    trait.base_confidence = sum(e.confidence for e in evidence) / len(evidence)
    trait.last_evidence_at = max(e.said_at for e in evidence)
    trait.content = latest.content
    trait.strength = round(policy.trait_strength(trait, now), 6)
    trait.save()


def _decide(trait: PersonaTrait, decision: str, *, status: str | None = None, note: Note | None = None) -> None:
    """Record what the promotion rule decided for the trait, with its new status and profile note."""
    fields = ["decision", "updated_at"]
    if status is not None:
        trait.status = status
        fields.insert(0, "status")
    if note is not None:
        trait.note = note
        fields.insert(1 if status is not None else 0, "note")
    trait.decision = decision
    trait.save(update_fields=fields)


def _promote_or_reinforce(trait: PersonaTrait, source: TurnSource, item: ExtractedItem, *, actor, now: datetime):
    """Apply the promotion rule and the conflict policy; return (reason, note or None)."""
    threshold = (f"strength {trait.strength:.3f} (≥ {policy.PERSONA_PROMOTION_STRENGTH}?), "
                 f"evidence {trait.evidence_count}/{policy.PERSONA_MIN_EVIDENCE}")
    if trait.note_id is not None and trait.status in (PersonaTrait.Status.PROMOTED, PersonaTrait.Status.DISPUTED):
        note = record_mention(trait.note, actor=actor, source=source.source_key, confidence=item.confidence,
                              source_message_ids=[m.pk for m in source.messages_for(item.speaker)])
        _decide(trait, f"reinforced profile note; {threshold}")
        return trait.decision, note
    if not policy.qualifies(trait.strength, trait.evidence_count):
        _decide(trait, f"not promoted yet: {threshold}")
        return trait.decision, None
    old = trait.conflicts_with
    old_note = old.note if old is not None and old.note_id and old.note.status == Note.Status.ACTIVE else None
    if old_note is None:
        note = _profile_note(trait, source, actor=actor)
        _decide(trait, f"promoted: {threshold}", status=PersonaTrait.Status.PROMOTED, note=note)
        return trait.decision, note
    old_strength = policy.trait_strength(old, now)
    margin = policy.PERSONA_TIE_MARGIN
    if trait.strength > old_strength + margin:
        note = _profile_note(trait, source, actor=actor)
        reason = f"persona update: new trait stronger ({trait.strength:.3f} > {old_strength:.3f})"
        supersede_note(old_note, note, actor=actor, reason=reason)
        _decide(old, reason, status=PersonaTrait.Status.SUPERSEDED)
        _decide(trait, reason, status=PersonaTrait.Status.PROMOTED, note=note)
        return reason, note
    if abs(trait.strength - old_strength) <= margin:
        note = _profile_note(trait, source, actor=actor, tags=[policy.DISPUTED_TAG])
        reason = f"disagreement kept: strengths {trait.strength:.3f} vs {old_strength:.3f} are within {margin}"
        link_notes(note, old_note, link_type=LinkType.CONTRADICTS, weight=1.0, actor=actor, reason=reason)
        evolve_note(old_note, actor=actor, triggered_by=note, tags=[policy.DISPUTED_TAG])
        _decide(trait, reason, status=PersonaTrait.Status.DISPUTED, note=note)
        _decide(old, reason, status=PersonaTrait.Status.DISPUTED)
        return reason, note
    _decide(trait, f"ignored for now: weaker than the current profile ({trait.strength:.3f} < {old_strength:.3f})")
    return trait.decision, None


def _profile_note(trait: PersonaTrait, source: TurnSource, *, actor, tags: list[str] | None = None) -> Note:
    """The user_profile note of a promoted trait, with every piece of its evidence as its source."""
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
