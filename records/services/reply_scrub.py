"""The recalled memories saved with chat replies (``Message.recalled``) hold a copy of each
note's content as shown (docs/chat-page.md). When notes are erased, their copies must go too:
:func:`scrub_recalled_notes` removes them from every reply that recalled them, and
:func:`redact_quoting_messages` the sentences a surviving reply repeated from erased content."""
from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db import transaction
from django.db.models import Q

from memory.models import Message
from memory.segmentation import search_text
from records.fingerprints import CLAUSE_BREAK, CLAUSE_MIN


@transaction.atomic
def scrub_recalled_notes(note_ids: Iterable[uuid.UUID | str]) -> int:
    """Remove the saved entries of ``note_ids`` from every reply; returns how many replies
    changed. Call it inside the erasure's transaction (its audit entry covers this too)."""
    wanted = {str(note_id) for note_id in note_ids}
    if not wanted:
        return 0
    changed = 0
    for note_id in wanted:
        # the note's own entry, or a copy of it shown as the other side of a contradiction
        replies = Message.objects.select_for_update().filter(
            Q(recalled__contains=[{"id": note_id}]) | Q(recalled__contains=[{"contradictions": [{"id": note_id}]}])
        )
        for reply in replies.only("id", "recalled", "citations"):
            kept = [without_contradictions(entry, wanted) for entry in reply.recalled
                    if not (isinstance(entry, dict) and entry.get("id") in wanted)]
            if kept != reply.recalled:
                Message.objects.filter(pk=reply.pk).update(recalled=kept, citations=without_cited(reply.citations, wanted))
                changed += 1
    return changed


def without_cited(citations, wanted: set[str]):
    """A reply's ``citations`` (docs/citations.md) without the sources named in ``wanted``."""
    if not isinstance(citations, dict) or not citations.get("cited"):
        return citations
    return {**citations, "cited": [entry for entry in citations["cited"]
                                   if not (isinstance(entry, dict) and entry.get("id") in wanted)]}


def without_contradictions(entry, wanted: set[str]):
    """A saved entry without the contradictions that name an erased note."""
    if not isinstance(entry, dict) or not entry.get("contradictions"):
        return entry
    others = [other for other in entry["contradictions"] if not (isinstance(other, dict) and other.get("id") in wanted)]
    return {**entry, "contradictions": others} if len(others) != len(entry["contradictions"]) else entry


REDACTED = "[…]"


def quoted_clauses(texts: Iterable[str]) -> set[str]:
    """The clauses of erased texts long enough that a reply repeating one quotes it (the
    clauses the tombstone's fingerprints name, as written)."""
    return {clause.strip() for text in texts for clause in CLAUSE_BREAK.split(text or "")
            if len(clause.strip()) >= CLAUSE_MIN}


@transaction.atomic
def redact_quoting_messages(firm, erased_messages: Iterable[int], clauses: set[str]) -> list[int]:
    """Replace, in every surviving message of the firm, each clause it quotes from the erased
    content by ``[…]`` (an offline reply composed from an erased note repeats its sentences); the
    message's search text is remade from what is left and its embedding dropped (the indexing job
    embeds it again). Returns the ids of the messages redacted (the tombstone counts them)."""
    if not clauses:
        return []
    ordered = sorted(clauses, key=len, reverse=True)
    quoting = Q()
    for clause in ordered:
        quoting |= Q(content__contains=clause)
    rows = Message.objects.select_for_update().filter(firm=firm).exclude(pk__in=list(erased_messages)).filter(quoting)
    changed = []
    for message in rows.only("id", "content"):
        content = message.content
        for clause in ordered:
            content = content.replace(clause, REDACTED)
        Message.objects.filter(pk=message.pk).update(
            content=content, search_text=search_text(content), embedding=None, embedding_model="")
        changed.append(message.pk)
    return changed
