"""A matter's chronology (案件时间线): its case notes on a time axis by when the fact held.

Each note is placed at the dates its own words state ("合同于2025年6月30日到期" → 30 June 2025; "去年
3月15日" resolved against the day it was said), read by the one reader of legal text
(``legaltext.dates``); a note whose words state no date is placed at the day it was said, and says
so. A superseded value stays on the axis, struck through, with when and by whom it was replaced
and by what; two current notes flagged as contradicting each other name each other.

``as_of`` shows the chronology as the firm's memory stood at that moment (system time): notes
stored after it are absent, and a value superseded after it is shown as it was then — current.
``valid_at`` shows the facts whose value held in the world on that day as the memory knows them
now (``Note.objects.valid_at``; world time): a value replaced later is shown as it held then,
with when, by whom and by what it was replaced. Both together: what held on ``valid_at`` as the
memory knew it at ``as_of``. The matter's documents are on the axis too, each at its upload
(``documents.selectors.matter_documents``, the documents' own wall), and a note made from a
document names it and its page. Forgotten notes are never shown (the user asked that they not be used again) and erased ones no
longer exist. Everything is read through ``Note.objects.visible_to(user)`` and the matter through
``Matter.objects.assigned_to(user)``: another firm's matter, or one behind the ethical wall, is a
404 at every date. A read: nothing is written (exports are recorded by ``chronology.services``).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import date, datetime

from django.http import Http404
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext

from documents.models import Document
from documents.selectors import matter_documents
from infra.http_input import MAX_DB_ID
from legaltext.dates import dates
from memory.as_of import parse_as_of as _parse_as_of
from memory.models import Category, LinkType, Matter, MemoryScope, Note, NoteLink
from recall import note_page_url

#: Dates of one note placed on the axis (a note naming more is a summary, not an event).
MAX_DATES_PER_NOTE = 3
#: The most notes one chronology reads (the newest kept); the bench reads 5,000.
MAX_NOTES = 20_000


@dataclass(frozen=True)
class Replacement:
    """When, by whom and by what a value on the axis was superseded."""

    at: datetime | None  # system time: when the memory superseded it (``retired_at``)
    by: str
    note_id: str | None
    content: str
    held_until: datetime | None = None  # world time: when its successor was said (``valid_to``)


@dataclass(frozen=True)
class ChronologyEntry:
    """One fact, or one document's upload, at one point of the axis."""

    on: date  # the day it sorts at (the first day of a month or year said without a day)
    label: str  # "2025-06-30", "2025-06", "2025", or a week "2025-03-30 起一周"
    precision: str  # "day", "week", "month", "year"
    dated_by: str  # "words": the note says the date; "said": the day it was said; "uploaded": a document's upload
    date_words: str  # the words that gave the date ("去年3月15日"), "" when dated by when it was said
    note_id: str
    content: str
    category: str
    category_label: str
    speaker: str
    subject: str
    said_at: datetime | None
    current: bool  # held at the moment shown (not struck through)
    replacement: Replacement | None  # known at the moment shown; beside a current value: replaced later
    conflicts: tuple[tuple[str, str], ...]  # (note id, content) of current notes it contradicts
    source: str  # "出自《房屋租赁合同》第 2 页", who said it, or a document's file name
    source_url: str
    kind: str = "fact"  # "fact": a note; "document": a document's upload
    document_id: int | None = None  # the document it came from, or is

    @property
    def state(self) -> str:
        """"current", "superseded" (struck through), "replaced_later" (held then: the valid-at
        view), "" for a document's upload."""
        if self.kind == "document":
            return ""
        if not self.current:
            return "superseded"
        return "replaced_later" if self.replacement is not None else "current"

    def payload(self) -> dict:
        replaced = self.replacement
        return {
            "kind": self.kind, "document_id": self.document_id,
            "on": self.on.isoformat(), "label": self.label, "precision": self.precision, "dated_by": self.dated_by,
            "date_words": self.date_words, "note_id": self.note_id or None, "content": self.content,
            "category": self.category, "category_label": self.category_label, "speaker": self.speaker,
            "subject": self.subject, "said_at": self.said_at.isoformat() if self.said_at else None,
            "state": self.state or None,
            "replaced": None if replaced is None else {
                "at": replaced.at.isoformat() if replaced.at else None, "by": replaced.by,
                "note_id": replaced.note_id, "content": replaced.content,
                "held_until": replaced.held_until.isoformat() if replaced.held_until else None},
            "conflicts": [{"note_id": note_id, "content": content} for note_id, content in self.conflicts],
            "source": self.source, "source_url": self.source_url,
        }


@dataclass(frozen=True)
class Chronology:
    matter: Matter
    as_of: datetime | None
    entries: list[ChronologyEntry] = field(default_factory=list)
    valid_at: datetime | None = None

    @property
    def dated_by_words(self) -> int:
        return sum(1 for entry in self.entries if entry.dated_by == "words")

    def payload(self) -> dict:
        return {
            "matter": {"id": self.matter.pk, "reference": self.matter.reference, "title": self.matter.title},
            "as_of": self.as_of.isoformat() if self.as_of else None,
            "valid_at": self.valid_at.isoformat() if self.valid_at else None,
            "entries": [entry.payload() for entry in self.entries],
        }


def parse_as_of(text: str | None, matter: Matter) -> datetime | None:
    """``as_of`` for this matter's chronology (``memory.as_of.parse_as_of``, from its firm's start)."""
    return _parse_as_of(text, began=matter.firm.created_at)


def parse_valid_at(text: str | None) -> datetime | None:
    """``valid_at`` (world time): any real date (``memory.as_of.parse_as_of`` with ``world``, as the
    search API reads it) — a lease of 2019 held before the firm kept a memory."""
    return _parse_as_of(text, began=None, world=True)


def chronology_matter(user, matter_id: int) -> Matter:
    """The matter, when ``user`` is assigned to it; a 404 otherwise (another firm's, walled, none)."""
    if not 0 < matter_id <= MAX_DB_ID:
        raise Http404
    matter = Matter.objects.assigned_to(user).filter(pk=matter_id).select_related("firm").first()
    if matter is None:
        raise Http404
    return matter


def matter_chronology(user, matter_id: int, *, as_of: datetime | None = None,
                      valid_at: datetime | None = None) -> Chronology:
    """The chronology of one matter ``user`` is assigned to, as it stands now or at ``as_of``
    (system time), or as it held in the world at ``valid_at`` (both may be given)."""
    matter = chronology_matter(user, matter_id)
    held = Note.objects.visible_to(user).filter(matter=matter, memory_scope=MemoryScope.CASE)
    if valid_at is not None:
        held = held.valid_at(valid_at, as_of=as_of)
    elif as_of is not None:
        held = held.known_at(as_of)
    else:
        held = held.exclude(status=Note.Status.FORGOTTEN)
    notes = list(
        held.select_related("superseded_by")
        .only("id", "content", "category", "speaker", "subject", "said_at", "stored_at", "status", "retired_at",
              "valid_to", "superseded_by",
              "source_type", "source_id", "superseded_by__id", "superseded_by__content", "evolution_history")
        .order_by("-stored_at")[:MAX_NOTES]
    )
    if as_of is not None:  # read only: the wording the memory held then, not a later correction's
        for note in notes:
            note.content = note.content_at(as_of)
    # In the world view every listed value held then; otherwise those current in memory then.
    shown = {str(n.pk) for n in notes if valid_at is not None or _current_then(n, as_of)}
    conflicts = _open_conflicts(user, notes, shown)
    successors = {n.superseded_by_id for n in notes if n.superseded_by_id}
    visible = {n.pk for n in notes} | set(
        Note.objects.visible_to(user).filter(pk__in=successors - {n.pk for n in notes}).values_list("pk", flat=True))
    documents = list(matter_documents(user, matter).only("id", "title", "filename", "uploaded_at", "matter_id",
                                                         "uploaded_by", "uploaded_by__username"))
    # Read once for the whole list (a chronology reads thousands of notes: bench/bench_chronology.py).
    labels = {value: str(label) for value, label in Category.choices}
    page_url = note_page_url(_PLACEHOLDER)
    titles = {document.pk: document.title for document in documents}
    entries = [entry for note in notes
               for entry in _entries(note, as_of, str(note.pk) in shown, conflicts.get(str(note.pk), ()), labels,
                                     page_url, visible, titles)]
    entries += _document_events(documents, until=_earliest(as_of, valid_at))
    entries.sort(key=lambda e: (e.on, e.said_at or timezone.now(), e.content))
    return Chronology(matter=matter, as_of=as_of, entries=entries, valid_at=valid_at)


def _earliest(*moments: datetime | None) -> datetime | None:
    given = [moment for moment in moments if moment is not None]
    return min(given) if given else None


def _document_events(documents: list[Document], *, until: datetime | None) -> list[ChronologyEntry]:
    """A row "uploaded 《title》" per document (of those ``matter_documents`` let this reader see)
    at its upload, leading to the viewer; none uploaded after ``until`` (the moment shown)."""
    label = gettext("document")
    events = []
    for document in documents:
        if until is not None and document.uploaded_at > until:
            continue
        uploaded = timezone.localtime(document.uploaded_at)
        events.append(ChronologyEntry(
            on=uploaded.date(), label=uploaded.date().isoformat(), precision="day", dated_by="uploaded",
            date_words="", note_id="", content=gettext("uploaded “%(title)s”") % {"title": document.title},
            category="document", category_label=label,
            speaker=document.uploaded_by.username if document.uploaded_by else "", subject="",
            said_at=document.uploaded_at, current=True, replacement=None, conflicts=(), source=document.filename,
            source_url=reverse("document-viewer", args=[document.pk]), kind="document", document_id=document.pk,
        ))
    return events


def _current_then(note: Note, as_of: datetime | None) -> bool:
    """Whether the note was current now, or at ``as_of`` (``retired_at``: when memory superseded it)."""
    if note.status != Note.Status.SUPERSEDED:
        return True
    return as_of is not None and (note.retired_at is None or note.retired_at > as_of)


def _replacement(note: Note, as_of: datetime | None, visible: set) -> Replacement | None:
    """When (system time), by whom (the note's history; the audit holds the same) and by what the
    value was replaced; None while it was current (now, or at ``as_of``)."""
    if _current_then(note, as_of):
        return None
    step = next((s for s in reversed(note.evolution_history or []) if s.get("event") == "superseded"), {})
    newer = note.superseded_by
    if newer is not None and newer.pk not in visible:
        newer = None  # replaced by a note this reader may not see (another matter's): said, not quoted
    return Replacement(at=note.retired_at, by=str(step.get("by") or ""), note_id=str(newer.pk) if newer else None,
                       content=newer.content if newer else "", held_until=note.valid_to)


def _open_conflicts(user, notes: list[Note], shown: set[str]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Note id → the notes of this list current at the moment shown (``shown``) it is flagged as
    contradicting (both ways)."""
    current = {str(n.pk): n for n in notes if str(n.pk) in shown}
    if not current:
        return {}
    found: dict[str, list[tuple[str, str]]] = {}
    links = (NoteLink.objects.visible_to(user).filter(link_type=LinkType.CONTRADICTS, source_id__in=list(current))
             .values_list("source_id", "target_id"))
    for source_id, target_id in links:
        source, target = str(source_id), str(target_id)
        if source in current and target in current:
            found.setdefault(source, []).append((target, current[target].content))
            found.setdefault(target, []).append((source, current[source].content))
    return {note_id: tuple(dict.fromkeys(pairs)) for note_id, pairs in found.items()}


_PLACEHOLDER = uuid.UUID(int=0)


def _entries(note: Note, as_of: datetime | None, current: bool, conflicts: tuple[tuple[str, str], ...],
             labels: dict[str, str], page_url: str, visible: set, titles: dict[int, str]) -> list[ChronologyEntry]:
    """``current``: the value held at the moment shown (not struck through); a replacement known
    then is said beside it (in the world view: replaced later)."""
    replacement = _replacement(note, as_of, visible)
    document_id, source = _note_source(note, titles)
    common = dict(
        note_id=str(note.pk), content=note.content, category=note.category,
        category_label=labels.get(note.category, note.category), speaker=note.speaker, subject=note.subject,
        said_at=note.said_at, current=current, replacement=replacement, conflicts=conflicts,
        source=source, source_url=note.document_url() or page_url.replace(str(_PLACEHOLDER), str(note.pk)),
        document_id=document_id,
    )
    points = _dates_in(note)
    if points:
        return [ChronologyEntry(on=on, label=label, precision=precision, dated_by="words", date_words=words, **common)
                for on, label, precision, words in points]
    said = timezone.localtime(note.said_at or note.stored_at).date()
    return [ChronologyEntry(on=said, label=said.isoformat(), precision="day", dated_by="said", date_words="",
                            **common)]


def _note_source(note: Note, titles: dict[int, str]) -> tuple[int | None, str]:
    """(document id, the source said): "from 《title》 p. N" for a note made from a document the
    reader sees (its title as it is now), else the citation it was made with; who said it and
    when for a note from a conversation."""
    document = note.document_source()
    if document is not None:
        document_id, page = document[0], document[1]
        if document_id in titles:
            return document_id, gettext("from “%(title)s”, p. %(page)s") % {"title": titles[document_id], "page": page}
        return None, note.speaker
    if note.source_type == "document":
        return None, note.speaker
    said_on = f"{timezone.localtime(note.said_at):%Y-%m-%d}" if note.said_at else ""
    return None, " · ".join(p for p in (note.speaker, said_on) if p)


def _dates_in(note: Note) -> list[tuple[date, str, str, str]]:
    """(day it sorts at, label, precision, words) of the dates the note's words state."""
    said = timezone.localtime(note.said_at).date() if note.said_at else None
    points: list[tuple[date, str, str, str]] = []
    for mention in dates(note.content, said):  # the reader's dates alone: a chronology reads every note
        if not mention.iso or mention.precision not in ("day", "week", "month", "year"):
            continue  # a date the reader could not place ("上个月" with nothing to resolve it against)
        try:
            on = date.fromisoformat(_first_day(mention.iso))
        except ValueError:
            continue
        label = mention.iso if mention.precision != "week" else f"{mention.iso} ({mention.text})"
        point = (on, label, mention.precision, mention.text)
        if point not in points:
            points.append(point)
        if len(points) == MAX_DATES_PER_NOTE:
            break
    return points


def _first_day(iso: str) -> str:
    """"2025" → "2025-01-01", "2025-06" → "2025-06-01", a day as it is."""
    parts = iso.split("-")
    return "-".join([*parts, *["01"] * (3 - len(parts))])
