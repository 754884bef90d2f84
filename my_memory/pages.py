"""Reads behind the "my memory" page: what the assistant remembers about a user and their
matters, exactly through ``Note.objects.visible_to`` (docs/my-memory-and-admin.md)."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from uuid import UUID

from django.contrib.postgres.search import SearchQuery, SearchVector
from django.db.models import QuerySet

from memory.contradictions import Contradiction, contradictions_for
from memory.models import Matter, Message, Note
from memory.models.conversations import SEARCH_CONFIG
from recall import MAX_K, holds_identifier, identifiers_in, query_tokens, search_memory
from memory.selectors import visible_notes
from memory.timeline import TimelineEntry, note_timeline


@dataclass(frozen=True)
class MemoryFilters:
    """What the user asked the page for; every field already validated (my_memory.forms)."""

    query: str = ""
    scope: str = ""
    matter_id: int | None = None
    category: str = ""
    status: str = Note.Status.ACTIVE
    #: The memory as it stood then (system time, ``Note.objects.as_of``); None for now.
    as_of: datetime | None = None


@dataclass
class MemoryListing:
    notes: list[Note] | QuerySet[Note]
    searched: bool = False
    scores: dict[UUID, float] = field(default_factory=dict)


def filter_matters(user) -> QuerySet[Matter]:
    """The matters the user may filter by: those assigned to them, by reference."""
    return Matter.objects.assigned_to(user).select_related("firm").order_by("reference", "title")


def _filtered(user, filters: MemoryFilters) -> QuerySet[Note]:
    notes = visible_notes(user).in_state(filters.status, filters.as_of)
    if filters.scope:
        notes = notes.filter(memory_scope=filters.scope)
    if filters.matter_id is not None:
        notes = notes.filter(matter_id=filters.matter_id)
    if filters.category:
        notes = notes.filter(category=filters.category)
    return notes


def _with_every_word(notes: QuerySet[Note], query: str) -> QuerySet[Note]:
    """Notes holding every word of the query: the same segmentation and full-text column as the
    keyword search (Chinese is segmented by jieba, so "电脑花屏" finds "电脑……出现花屏")."""
    tokens = query_tokens(query)[:32]
    if not tokens:
        return notes.filter(content__icontains=query.strip())
    raw = " & ".join("'" + token.replace("\\", "\\\\").replace("'", "''") + "'" for token in tokens)
    return notes.annotate(words=SearchVector("search_text", config=SEARCH_CONFIG)).filter(
        words=SearchQuery(raw, config=SEARCH_CONFIG, search_type="raw")
    )


def my_memory_notes(user, filters: MemoryFilters) -> MemoryListing:
    """The notes the page lists. A search of current notes asks the assistant's own recall
    (``search_memory``: meaning and keywords, best first), so the page shows what the assistant
    would recall; superseded and forgotten notes are never recalled, so they are matched by text.
    With ``as_of`` the list and the search are of the memory as it stood then."""
    notes = _filtered(user, filters)
    if not filters.query:
        return MemoryListing(notes=notes.order_by("-stored_at"))
    identifiers = identifiers_in(filters.query)
    if filters.status != Note.Status.ACTIVE:
        found = _with_every_word(notes, filters.query).order_by("-stored_at")
        if identifiers:
            found = [note for note in found if holds_identifier(note.content, identifiers)]
        return MemoryListing(notes=found, searched=True)
    result = search_memory(
        user,
        filters.query,
        k=MAX_K,
        matter_id=filters.matter_id,
        scopes=[filters.scope] if filters.scope else None,
        as_of=filters.as_of,
    )
    # A question naming an exact identifier (an ID number, a case number) lists only the notes
    # holding it; every list is sorted by the relevance it shows.
    hits = [hit for hit in result.hits if hit.note is not None
            and (not identifiers or holds_identifier(hit.note.content, identifiers))]
    scores = {hit.note.pk: hit.breakdown.total
              for hit in sorted(hits, key=lambda hit: hit.breakdown.total, reverse=True)}
    by_id = notes.in_bulk(list(scores))
    listed = [by_id[pk] for pk in scores if pk in by_id]
    for note in listed:
        note.relevance = scores[note.pk]
    return MemoryListing(notes=listed, searched=True, scores=scores)


def worded_as_of(notes: list[Note], as_of: datetime | None) -> None:
    """At ``as_of``, each listed note in the wording it had then (``Note.content_at``: a later
    correction a person made is not what the memory said then). For display; nothing is saved."""
    if as_of is not None:
        for note in notes:
            note.content = note.content_at(as_of)


def mark_contradictions(user, notes: list[Note]) -> None:
    """Set ``contradictions`` on each listed note: the current notes of the same slot with another
    value it disagrees with (``memory.contradictions``), for the page's flag. One statement."""
    found = contradictions_for(user, [note.pk for note in notes])
    for note in notes:
        note.contradictions = found.get(note.pk, [])


@dataclass
class NoteDetails:
    note: Note
    source_messages: list[Message]
    hidden_sources: int
    timeline: list[TimelineEntry]
    can_change: bool
    successor: Note | None
    contradictions: list[Contradiction] = field(default_factory=list)


def note_details(user, note: Note) -> NoteDetails:
    """One visible note with its source turn (only the messages the user may read: their own
    conversations), its history in words, and whether they may correct or forget it."""
    sources = list(
        Message.objects.visible_to(user)
        .filter(id__in=note.source_message_ids)
        .select_related("conversation")
        .order_by("said_at", "id")
    )
    successor = None
    if note.superseded_by_id:
        successor = visible_notes(user).filter(pk=note.superseded_by_id).first()
    return NoteDetails(
        note=note,
        source_messages=sources,
        hidden_sources=len(set(note.source_message_ids)) - len(sources),
        timeline=note_timeline(note, viewer=user),
        can_change=Note.objects.changeable_by(user).filter(pk=note.pk).exists(),
        successor=successor,
        contradictions=contradictions_for(user, [note.pk]).get(note.pk, []),
    )
