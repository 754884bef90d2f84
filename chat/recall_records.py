"""The recalled memories saved with chat replies (``Message.recalled``) hold a copy of each
note's content as shown (docs/chat-page.md). When notes are erased, their copies must go too:
:func:`scrub_recalled_notes` removes them from every reply that recalled them."""
from __future__ import annotations

import uuid
from collections.abc import Iterable

from django.db import transaction

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
        replies = Message.objects.select_for_update().filter(recalled__contains=[{"id": note_id}])
        for reply in replies.only("id", "recalled"):
            kept = [entry for entry in reply.recalled if not (isinstance(entry, dict) and entry.get("id") in wanted)]
            if len(kept) != len(reply.recalled):
                Message.objects.filter(pk=reply.pk).update(recalled=kept)
                changed += 1
    return changed
