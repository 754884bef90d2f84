"""The recalled memories saved with chat replies (``Message.recalled``) hold a copy of each
note's content as shown (docs/chat-page.md). When notes are erased, their copies must go too:
:func:`scrub_recalled_notes` removes them from every reply that recalled them."""
from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db import transaction
from django.db.models import Q

from memory.models import Message


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
        for reply in replies.only("id", "recalled"):
            kept = [_without(entry, wanted) for entry in reply.recalled
                    if not (isinstance(entry, dict) and entry.get("id") in wanted)]
            if kept != reply.recalled:
                Message.objects.filter(pk=reply.pk).update(recalled=kept)
                changed += 1
    return changed


def _without(entry, wanted: set[str]):
    """A saved entry without the contradictions that name an erased note."""
    if not isinstance(entry, dict) or not entry.get("contradictions"):
        return entry
    others = [other for other in entry["contradictions"] if not (isinstance(other, dict) and other.get("id") in wanted)]
    return {**entry, "contradictions": others} if len(others) != len(entry["contradictions"]) else entry
