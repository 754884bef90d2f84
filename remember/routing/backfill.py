"""Contradictions among notes written before routing linked them (docs/memory-model.md,
"Contradictions"): each current note is compared, as routing compares a new one, with its nearest
current neighbours in the same context said before it, and linked ``contradicts`` to each one it
disagrees with (``disagreement.disagreement``). Each link is audited; running it again adds nothing."""
from __future__ import annotations

from django.db import transaction
from django.db.models import Q

from memory.contradictions import said_order
from memory.labels import disagreement_reason
from memory.models import Firm, LinkType, Note, NoteLink
from remember.routing.decide import _comparable as comparable_categories
from remember.routing.neighbours import nearest_notes
from remember.routing.disagreement import disagreement
from memory.services.notes import NoteDraft, PlannedLink, link_notes_in_bulk

ACTOR = "system:link_contradictions"


def link_contradictions(*, firm: Firm | None = None, actor=ACTOR) -> int:
    """Link every current pair that disagrees and is not linked yet; returns how many links were made."""
    notes = Note.objects.active().with_embedding().filter(owner__isnull=False)
    if firm is not None:
        notes = notes.filter(firm=firm)
    created = 0
    for pk in notes.order_by("said_at", "stored_at").values_list("pk", flat=True):
        note = Note.objects.select_related("firm", "matter", "owner", "conversation").get(pk=pk)
        with transaction.atomic():
            links = []
            for nb in nearest_notes(NoteDraft.from_note(note), note.embedding):
                other = nb.note
                if other.pk == note.pk or said_order(other) >= said_order(note):
                    continue  # each pair once: from the newer statement
                if not comparable_categories(note.category, other.category):
                    continue
                values = disagreement(note.content, other.content)
                if values is None or _linked(note, other):
                    continue
                links.append(PlannedLink(note, other, LinkType.CONTRADICTS, 1.0, disagreement_reason(values)))
            created += link_notes_in_bulk(links, actor=actor)
    return created


def _linked(a: Note, b: Note) -> bool:
    return NoteLink.objects.filter(link_type=LinkType.CONTRADICTS).filter(
        Q(source=a, target=b) | Q(source=b, target=a)).exists()
