"""Apply a routing decision: the note, its supersession or mention, its links and the
neighbours' evolution (A-Mem), and the recorded decision — one transaction per item."""
from __future__ import annotations

import numpy as np
from django.db import transaction

from memory.models import Category, LinkType, Note, RoutingDecision
from memory.pipeline.drafts import is_source_tag
from memory.pipeline.routing import thresholds
from memory.pipeline.routing.decide import Decision, decide
from memory.pipeline.routing.neighbours import Neighbour, lock_context, nearest_notes
from memory.services.audit import batched as batched_audit
from memory.services.notes import (
    NoteDraft,
    content_hash,
    create_note,
    evolve_note,
    link_notes,
    record_mention,
    supersede_note,
)

SUPPORTS_MAX = 3
_CATEGORY_TAGS = frozenset({"事实", "证据", "法条", "诉求", "偏好", "行动建议"})


def route_and_write(
    draft: NoteDraft,
    embedding: np.ndarray,
    *,
    actor,
    source_key: str,
    item_index: int,
    turn=None,
    consolidation=None,
) -> RoutingDecision:
    """Decide and apply one item in a single transaction: the note (if any), its links, the
    neighbours' evolution and the recorded decision commit together or not at all."""
    draft.validate()
    fingerprint = content_hash(draft.content)
    with transaction.atomic(), batched_audit():  # the item's audit entries: one INSERT
        lock_context(draft)
        existing = RoutingDecision.objects.filter(source_key=source_key, content_hash=fingerprint).first()
        if existing is not None:
            return existing  # this item of this turn was already routed (resumed job)
        neighbours = nearest_notes(draft, embedding)
        decision = decide(draft, neighbours)
        note = _apply(decision, draft, embedding, neighbours, actor=actor, source_key=source_key)
        return RoutingDecision.objects.create(
            firm=draft.firm,
            matter=draft.matter,
            owner=draft.owner,
            source_key=source_key,
            turn=turn,
            consolidation=consolidation,
            item_index=item_index,
            content=draft.content,
            content_hash=fingerprint,
            category=draft.category,
            action=decision.action,
            reason=decision.reason[:500],
            note=note,
            previous=decision.previous,
            similarity=decision.similarity,
        )


def _apply(decision: Decision, draft: NoteDraft, embedding: np.ndarray, neighbours: list[Neighbour], *,
           actor, source_key: str) -> Note | None:
    """Write what the decision says; returns the note written or reinforced."""
    if decision.duplicate:
        note = decision.previous
        if note.source_id == draft.source_id and note.source_type == draft.source_type:
            decision.reason += " from this same source (not counted again)"
            return note
        return record_mention(note, actor=actor, source=source_key, confidence=draft.confidence,
                              source_message_ids=draft.source_message_ids, savepoint=False)
    if decision.action not in (RoutingDecision.Action.ADD, RoutingDecision.Action.UPDATE):
        return None
    if decision.importance is not None:
        draft.importance = decision.importance
    # Everything below runs inside route_and_write's transaction, which rolls back as a whole
    # on any error: no savepoints (docs/performance.md).
    note = create_note(draft, actor=actor, embedding=embedding, savepoint=False)
    if decision.action == RoutingDecision.Action.UPDATE:
        supersede_note(decision.previous, note, actor=actor, reason=decision.reason, savepoint=False)
    if decision.contradicts is not None:
        link_notes(note, decision.contradicts, link_type=LinkType.CONTRADICTS, weight=1.0, actor=actor,
                   reason=decision.reason[:300], savepoint=False)
    _link_distinct_events(note, decision.siblings, actor=actor)
    superseded = decision.previous.pk if decision.action == RoutingDecision.Action.UPDATE else None
    link_and_evolve(note, [nb for nb in neighbours if nb.note.pk != superseded], actor=actor)
    return note


def _said(note: Note):
    return note.said_at or note.stored_at


def _link_distinct_events(note: Note, siblings: list[Note], *, actor) -> None:
    """Join a distinct event to its closest siblings in said-at order: the latest one said
    before it → it → the earliest one said after it (``temporal_next``)."""
    before = [s for s in siblings if _said(s) <= _said(note)]
    after = [s for s in siblings if _said(s) > _said(note)]
    reason = "distinct event of the same kind (kept, not superseded)"
    if before:
        link_notes(max(before, key=_said), note, link_type=LinkType.TEMPORAL_NEXT, weight=1.0, actor=actor,
                   reason=reason, savepoint=False)
    if after:
        link_notes(note, min(after, key=_said), link_type=LinkType.TEMPORAL_NEXT, weight=1.0, actor=actor,
                   reason=reason, savepoint=False)


def link_and_evolve(note: Note, neighbours: list[Neighbour], *, actor) -> None:
    """A-Mem linking: semantic links to the nearest neighbours (weight = cosine, at most
    ``LINK_MAX_SEMANTIC`` above ``LINK_MIN_SIMILARITY``), ``temporal_next`` from the previous
    note of the conversation, ``same_matter`` to the matter's latest note from another
    conversation, ``supports`` between evidence and facts of the matter; then evolution of the
    closest neighbours' tags and context."""
    semantic = [nb for nb in neighbours if nb.similarity >= thresholds.LINK_MIN_SIMILARITY][: thresholds.LINK_MAX_SEMANTIC]
    for nb in semantic:
        link_notes(note, nb.note, link_type=LinkType.SEMANTIC, weight=round(nb.similarity, 4), actor=actor,
                   reason=f"nearest neighbour, cosine {nb.similarity:.3f}", savepoint=False)
    if note.conversation_id is not None:
        previous = (
            Note.objects.filter(conversation_id=note.conversation_id, firm=note.firm, status=Note.Status.ACTIVE)
            .exclude(pk=note.pk)
            .filter(stored_at__lte=note.stored_at)
            .order_by("-stored_at")
            .first()
        )
        if previous is not None and _same_wall(previous, note):
            link_notes(previous, note, link_type=LinkType.TEMPORAL_NEXT, weight=1.0, actor=actor,
                       reason="next note of the same conversation", savepoint=False)
    if note.matter_id is not None:
        other = (
            Note.objects.filter(matter_id=note.matter_id, status=Note.Status.ACTIVE)
            .exclude(pk=note.pk)
            .exclude(conversation_id=note.conversation_id)
            .order_by("-stored_at")
            .first()
        )
        if other is not None:
            link_notes(note, other, link_type=LinkType.SAME_MATTER, weight=0.5, actor=actor,
                       reason="same matter, another conversation", savepoint=False)
        pairs = {Category.EVIDENCE: Category.FACT, Category.FACT: Category.EVIDENCE}
        wanted = pairs.get(note.category)
        if wanted is not None:
            supports = [nb for nb in neighbours if nb.note.category == wanted and nb.note.matter_id == note.matter_id]
            for nb in supports[:SUPPORTS_MAX]:
                evidence, fact = (note, nb.note) if note.category == Category.EVIDENCE else (nb.note, note)
                link_notes(evidence, fact, link_type=LinkType.SUPPORTS, weight=round(nb.similarity, 4),
                           actor=actor, reason="evidence for a fact of the same matter", savepoint=False)
    new_tags = [t for t in note.tags if t not in _CATEGORY_TAGS and not is_source_tag(t)]
    for nb in neighbours[:2]:
        if nb.similarity < thresholds.EVOLVE_MIN_SIMILARITY:
            break
        evolve_note(
            nb.note,
            actor=actor,
            triggered_by=note,
            tags=new_tags or None,
            context=note.context if not nb.note.context and note.context else None,
            savepoint=False,
        )


def _same_wall(a: Note, b: Note) -> bool:
    """temporal_next only joins notes that share visibility (never a profile note to a case note)."""
    return a.memory_scope == b.memory_scope and a.matter_id == b.matter_id
