"""Contradicting notes in a search result: each note hit carries its open contradictions
(``memory.contradictions``), and of two contradicting notes that are both recalled the newer
statement ranks first — the older one keeps its place in the result, just below it (for a
question asking for the first version given, the older ranks first). ``search_memory`` runs it
after every strategy."""
from __future__ import annotations

from dataclasses import replace

from django.db.models import QuerySet

from memory.contradictions import open_contradictions
from memory.models import Note
from recall.reach import Reach
from recall.types import Hit


def newer_first(user, hits: list[Hit], reach: Reach | None = None, *, older_first: bool = False) -> list[Hit]:
    """``hits`` with their contradictions, a newer statement moved just above the older one it
    contradicts when it ranked below it — the older one above the newer, for a question asking
    for the first version given (``older_first``); ranks numbered anew. One statement, none
    without notes (the user's firms and matters of ``reach`` as literals, as the search's own
    reads)."""
    def visible() -> QuerySet[Note]:  # built only when a pair is found: most answers have none
        return Note.objects.visible_to(user, **reach.literals()) if reach is not None else Note.objects.visible_to(user)

    found = open_contradictions([hit.note.pk for hit in hits if hit.note is not None], visible=visible)
    if not found:
        return hits
    order = [replace(hit, contradictions=found.get(hit.note.pk, [])) if hit.note is not None else hit for hit in hits]
    for _round in range(len(order)):  # each move puts one newer note above an older one: bounded
        position = {hit.note.pk: i for i, hit in enumerate(order) if hit.note is not None}
        move = next(((i, position[c.other.pk]) for i, hit in enumerate(order) for c in hit.contradictions
                     if c.newer == older_first and position.get(c.other.pk, -1) > i), None)
        if move is None:
            break
        older, newer = move
        order.insert(older, order.pop(newer))
    return [replace(hit, rank=rank) for rank, hit in enumerate(order, start=1)]
