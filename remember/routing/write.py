"""Apply a routing decision: the note, its supersession or mention, its links and the
neighbours' evolution (A-Mem), and the recorded decision — one transaction per item."""
from __future__ import annotations

import re
from dataclasses import replace

import numpy as np
from django.db import transaction
from django.db.models import Value

from memory.models import Category, LinkType, Note, RoutingDecision
from remember.services.decisions import record_decision, recorded_decision
from remember.drafts import is_source_tag
from remember.routing import thresholds
from remember.routing.decide import Decision, decide
from legaltext.corrections import says_it_corrects
from legaltext.values import Value as LegalValue, values as legal_values
from remember.routing.neighbours import Neighbour, lock_context, nearest_notes
from memory.labels import disagreement_reason
from memory.services.audit import batched as batched_audit
from memory.services.notes import (
    NoteDraft,
    PlannedLink,
    content_hash,
    create_note,
    evolve_note,
    link_notes_in_bulk,
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
    # No savepoint: the caller's transaction (one per item, or one per turn in the bulk import)
    # rolls back as a whole on an error; a refused draft raises above, before anything is written.
    with transaction.atomic(savepoint=False), batched_audit():  # the item's audit entries: one INSERT
        lock_context(draft)
        existing = recorded_decision(source_key, fingerprint)
        if existing is not None:
            return existing  # this item of this turn was already routed (resumed job)
        # A turn that says it corrects something may correct a note said sessions ago: it is
        # compared with more of the context's notes than the nearest few (thresholds).
        cued = says_it_corrects(draft.said or draft.content)
        neighbours = nearest_notes(draft, embedding,
                                   k=thresholds.ROUTING_CORRECTION_NEIGHBOURS if cued else None)
        decision = decide(draft, neighbours)
        note = _apply(decision, draft, embedding, neighbours, actor=actor, source_key=source_key)
        return record_decision(
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
    if decision.revised:  # the stored note with the corrected value: embedded as written
        note = create_note(_revision_draft(draft, decision), actor=actor, savepoint=False)
        if decision.keep_draft:  # what the correction's message says besides the correction
            create_note(draft, actor=actor, embedding=embedding, savepoint=False)
    else:
        note = create_note(draft, actor=actor, embedding=embedding, savepoint=False)
    also = []
    if decision.action == RoutingDecision.Action.UPDATE:
        supersede_note(decision.previous, note, actor=actor, reason=decision.reason, savepoint=False)
        also = _also_corrected(decision, draft, neighbours, note, actor=actor)
        also += _advice_on_corrected_values(decision.previous, note, actor=actor)
    links = []
    if decision.contradicts is not None:
        links.append(PlannedLink(note, decision.contradicts, LinkType.CONTRADICTS, 1.0, decision.reason[:300]))
    links += _distinct_event_links(note, decision.siblings)
    links += [PlannedLink(note, other, LinkType.CONTRADICTS, 1.0, disagreement_reason(values))
              for other, values in decision.disagrees]
    superseded = {decision.previous.pk, *also} if decision.action == RoutingDecision.Action.UPDATE else set()
    link_and_evolve(note, [nb for nb in neighbours if nb.note.pk not in superseded], actor=actor, links=links)
    return note


def _also_corrected(decision: Decision, draft: NoteDraft, neighbours: list[Neighbour], note: Note, *,
                    actor) -> list:
    """The other current notes the same correction replaces: a client's 押金2000元 noted twice
    (the model's item and the rules' floor) is corrected in both, or the old value stays current
    in one (issue 56). Each is decided alone, as routing decides a pair; a revised note gets its
    own revision, any other is superseded by the note just written. Returns their ids."""
    done = []
    for nb in neighbours:
        if nb.note.pk in (decision.previous.pk, note.pk) or nb.note.status != Note.Status.ACTIVE:
            continue
        alone = decide(draft, [nb])
        if alone.action != RoutingDecision.Action.UPDATE or bool(alone.revised) != bool(decision.revised):
            continue
        successor = create_note(_revision_draft(draft, alone), actor=actor, savepoint=False) if alone.revised else note
        supersede_note(nb.note, successor, actor=actor, reason=f"the same correction: {alone.reason}"[:500],
                       savepoint=False)
        done.append(nb.note.pk)
    return done


#: The smallest sum whose correction retires the assistant's figures worked out from it: "3" or
#: "40个" appear in too many unrelated sentences to tell that a figure rests on them.
MIN_WORKED_FROM = 1000


def _corrected_values(old: str, new: str) -> list[LegalValue]:
    """The sums and rates of ``old`` that ``new`` (its correction) no longer states."""
    kept = legal_values(new)
    return [v for v in legal_values(old) if v.kind in ("money", "number", "percent")
            and (v.kind == "percent" or abs(float(v.magnitude)) >= MIN_WORKED_FROM)
            and not any(v.matches(k) for k in kept)]


def _advice_on_corrected_values(previous: Note, note: Note, *, actor) -> list:
    """The assistant's current notes of the same conversation, said before the correction, that
    state a value the correction replaced ("3 × 138,000 = 414,000" after the price is corrected to
    128,000; "约11289.6元" worked out from the corrected 尾款): they rest on it and are retired with
    it, superseded by the correction (history kept). Returns their ids."""
    if note.conversation_id is None:
        return []
    corrected = _corrected_values(previous.content, note.content)
    if not corrected:
        return []
    resting = (Note.objects.filter(firm_id=note.firm_id, conversation_id=note.conversation_id, status=Note.Status.ACTIVE,
                                   speaker="assistant", said_at__lt=note.said_at or previous.said_at)
               .exclude(pk__in=[note.pk, previous.pk]))
    done = []
    for advice in resting:
        stale = [v for v in legal_values(advice.content) if any(_worked_from(v, c, advice.content) for c in corrected)]
        if stale:
            supersede_note(advice, note, actor=actor, savepoint=False,
                           reason=f"worked out from {stale[0].text}, since corrected: {note.content[:200]}"[:500])
            done.append(advice.pk)
    return done


#: Words that say a sum is a multiple of another: "应当双倍返还定金…即40万元" rests on the 20万 deposit.
_MULTIPLE_RE = re.compile(r"双倍|两倍|二倍|2倍|三倍|3倍|\b(?:double|twice|triple|treble)\b", re.IGNORECASE)


def _worked_from(value: LegalValue, corrected: LegalValue, text: str) -> bool:
    """``value`` is ``corrected`` itself, or its double or triple in a note that says so."""
    if value.matches(corrected):
        return True
    if value.kind not in ("money", "number") or corrected.kind not in ("money", "number") \
            or not _MULTIPLE_RE.search(text) or not corrected.magnitude:
        return False
    return value.magnitude / corrected.magnitude in (2, 3)


def _revision_draft(draft: NoteDraft, decision: Decision) -> NoteDraft:
    """The revised note: the stored note's text with the corrected value, citing the messages
    the stored note cited and the correction's (it says what both said), in the stored note's
    speaker's name — it is their statement corrected, not the corrector's words."""
    cited = [*decision.previous.source_message_ids,
             *(i for i in draft.source_message_ids if i not in decision.previous.source_message_ids)]
    return replace(draft, content=decision.revised, source_message_ids=cited,
                   speaker=decision.previous.speaker or draft.speaker)


def _said(note: Note):
    return note.said_at or note.stored_at


def _distinct_event_links(note: Note, siblings: list[Note]) -> list[PlannedLink]:
    """Join a distinct event to its closest siblings in said-at order: the latest one said
    before it → it → the earliest one said after it (``temporal_next``)."""
    before = [s for s in siblings if _said(s) <= _said(note)]
    after = [s for s in siblings if _said(s) > _said(note)]
    reason = "distinct event of the same kind (kept, not superseded)"
    links = []
    if before:
        links.append(PlannedLink(max(before, key=_said), note, LinkType.TEMPORAL_NEXT, 1.0, reason))
    if after:
        links.append(PlannedLink(note, min(after, key=_said), LinkType.TEMPORAL_NEXT, 1.0, reason))
    return links


def link_and_evolve(note: Note, neighbours: list[Neighbour], *, actor, links: list[PlannedLink] | None = None) -> None:
    """A-Mem linking: semantic links to the nearest neighbours (weight = cosine, at most
    ``LINK_MAX_SEMANTIC`` above ``LINK_MIN_SIMILARITY``), ``temporal_next`` from the previous
    note of the conversation, ``same_matter`` to the matter's latest note from another
    conversation, ``supports`` between evidence and facts of the matter; then evolution of the
    closest neighbours' tags and context. All the links (after ``links``, those the routing
    decision asked for) are written in one statement, in this order."""
    links = list(links or [])
    semantic = [nb for nb in neighbours if nb.similarity >= thresholds.LINK_MIN_SIMILARITY][: thresholds.LINK_MAX_SEMANTIC]
    for nb in semantic:
        links.append(PlannedLink(note, nb.note, LinkType.SEMANTIC, round(nb.similarity, 4),
                                 f"nearest neighbour, cosine {nb.similarity:.3f}"))
    previous, other = _previous_and_other(note)
    if previous is not None and _same_wall(previous, note):
        links.append(PlannedLink(previous, note, LinkType.TEMPORAL_NEXT, 1.0, "next note of the same conversation"))
    if note.matter_id is not None:
        if other is not None:
            links.append(PlannedLink(note, other, LinkType.SAME_MATTER, 0.5, "same matter, another conversation"))
        pairs = {Category.EVIDENCE: Category.FACT, Category.FACT: Category.EVIDENCE}
        wanted = pairs.get(note.category)
        if wanted is not None:
            supports = [nb for nb in neighbours if nb.note.category == wanted and nb.note.matter_id == note.matter_id]
            for nb in supports[:SUPPORTS_MAX]:
                evidence, fact = (note, nb.note) if note.category == Category.EVIDENCE else (nb.note, note)
                links.append(PlannedLink(evidence, fact, LinkType.SUPPORTS, round(nb.similarity, 4),
                                         "evidence for a fact of the same matter"))
    link_notes_in_bulk(links, actor=actor)
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


def _previous_and_other(note: Note) -> tuple[Note | None, Note | None]:
    """In one statement: the conversation's active note stored just before ``note`` (for
    ``temporal_next``) and the matter's latest active note of another conversation (for
    ``same_matter``); None where the note has no conversation / matter or there is none."""
    wanted = []
    if note.conversation_id is not None:
        wanted.append(
            Note.objects.filter(conversation_id=note.conversation_id, firm_id=note.firm_id, status=Note.Status.ACTIVE)
            .exclude(pk=note.pk)
            .filter(stored_at__lte=note.stored_at)
            .annotate(role=Value("previous"))
            .order_by("-stored_at")[:1]
        )
    if note.matter_id is not None:
        wanted.append(
            Note.objects.filter(matter_id=note.matter_id, status=Note.Status.ACTIVE)
            .exclude(pk=note.pk)
            .exclude(conversation_id=note.conversation_id)
            .annotate(role=Value("other"))
            .order_by("-stored_at")[:1]
        )
    if not wanted:
        return None, None
    query = wanted[0] if len(wanted) == 1 else wanted[0].union(wanted[1], all=True)
    found = {row.role: row for row in query}
    return found.get("previous"), found.get("other")


def _same_wall(a: Note, b: Note) -> bool:
    """temporal_next only joins notes that share visibility (never a profile note to a case note)."""
    return a.memory_scope == b.memory_scope and a.matter_id == b.matter_id
