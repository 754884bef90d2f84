"""Contradictions: two current notes about the same slot with different values
(docs/memory-model.md, "Contradictions"). Reads only.

The write path stores the pair — routing links a new note ``contradicts`` to each current
neighbour it disagrees with (``remember.routing.slots.disagreement``), or to the better
supported note it could not replace; persona links disagreeing traits the same way. Whether a
pair is still *open* is read here, each time: both notes active (a superseded, forgotten or
deleted note closes it; a person's correction removes the link, ``services.notes.correct_note``)
and both visible to the reader. The newer statement (said later) is the one to believe first.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable, Iterable
from uuid import UUID

from django.db import connection
from django.db.models import BooleanField, Exists, ExpressionWrapper, OuterRef, Q, QuerySet

from memory.models import LinkType, Note, NoteLink


#: What is read of the notes of a pair: enough to show the other one and to say which is newer.
SHOWN_FIELDS = ("id", "firm_id", "content", "matter_id", "status", "said_at", "stored_at")


@dataclass(frozen=True)
class Contradiction:
    """The other note of an open pair, seen from one note."""

    other: Note
    newer: bool  # whether the note it is seen from is the newer statement of the two


def said_order(note: Note) -> tuple:
    """When a note was said (stored, then its id, breaking ties): the later one is the newer."""
    return (note.said_at or note.stored_at, note.stored_at, str(note.pk))


def open_contradictions(
    note_ids: Iterable[UUID], *, visible: QuerySet[Note] | Callable[[], QuerySet[Note]]
) -> dict[UUID, list[Contradiction]]:
    """For each of ``note_ids``: the current notes of ``visible`` it disagrees with. One short
    statement (by the links' indexed ends, both ends current; a search runs it for every answer)
    and, only when a pair is found, a second one: the notes at both ends under ``visible`` — given
    as a function when building it costs more than the first statement (the search's)."""
    ids = set(note_ids)
    if not ids:
        return {}
    with connection.cursor() as cursor:
        cursor.execute(_PAIRS, [list(ids), list(ids)])
        pairs = cursor.fetchall()
    if not pairs:
        return {}
    ends = {pk for pair in pairs for pk in pair}
    if callable(visible):
        visible = visible()
    notes = visible.filter(pk__in=ends).order_by().only(*SHOWN_FIELDS).in_bulk()
    found: dict[UUID, list[Contradiction]] = defaultdict(list)
    for source_id, target_id in pairs:
        if source_id not in notes or target_id not in notes:
            continue  # the reader does not see one of them
        for this, other in ((notes[source_id], notes[target_id]), (notes[target_id], notes[source_id])):
            if this.pk in ids and all(c.other.pk != other.pk for c in found[this.pk]):
                found[this.pk].append(Contradiction(other=other, newer=said_order(this) > said_order(other)))
    return dict(found)


_PAIRS = (
    f"SELECT l.source_id, l.target_id FROM {NoteLink._meta.db_table} l"
    f" JOIN {Note._meta.db_table} s ON s.id = l.source_id JOIN {Note._meta.db_table} t ON t.id = l.target_id"
    f" WHERE l.link_type = '{LinkType.CONTRADICTS.value}' AND (l.source_id = ANY(%s) OR l.target_id = ANY(%s))"
    f" AND s.status = '{Note.Status.ACTIVE.value}' AND t.status = '{Note.Status.ACTIVE.value}'"
    " ORDER BY l.created_at, l.id"
)


def contradictions_for(user, note_ids: Iterable[UUID]) -> dict[UUID, list[Contradiction]]:
    """``open_contradictions`` for what ``user`` may see."""
    return open_contradictions(note_ids, visible=Note.objects.visible_to(user))


def with_open_contradiction(notes: QuerySet[Note], *, visible: QuerySet[Note]) -> QuerySet[Note]:
    """``notes`` annotated ``in_contradiction``: the note is current and disagrees with another
    current note of ``visible`` (for lists: one EXISTS per row, no second query)."""
    current = visible.filter(status=Note.Status.ACTIVE).values("pk")
    links = NoteLink.objects.filter(link_type=LinkType.CONTRADICTS)
    return notes.annotate(in_contradiction=ExpressionWrapper(
        Q(status=Note.Status.ACTIVE)
        & (Exists(links.filter(source_id=OuterRef("pk"), target__in=current))
           | Exists(links.filter(target_id=OuterRef("pk"), source__in=current))),
        output_field=BooleanField(),
    ))
