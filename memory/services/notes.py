"""Writing notes and links: create, correct, evolve, delete — each in one transaction, each audited."""
from __future__ import annotations

import hashlib
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, time
from typing import Any

import numpy as np
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from infra.embeddings import get_embedder
from memory.models import (
    AuditEvent,
    Category,
    Conversation,
    Firm,
    LinkType,
    Matter,
    MemoryScope,
    MemoryType,
    Note,
    NoteLink,
    SourceType,
)
from legaltext.as_of import held_from
from memory.segmentation import search_text
from memory.services.audit import actor_label, record, record_note_event
from memory.transaction_memo import remembered

MAX_NOTE_CHARS = 4000

# Fields a person (auditor, firm admin) may correct; provenance is never edited.
CORRECTABLE_FIELDS = (
    "content",
    "memory_scope",
    "category",
    "memory_type",
    "keywords",
    "tags",
    "context",
    "importance",
    "confidence",
    "subject",
)


class NoteValidationError(ValueError):
    """A note that would break the memory model (wrong firm, missing owner, empty content…)."""


class NoteNotChangeable(PermissionError):
    """The user may see the note but not correct or forget it (``Note.objects.changeable_by``)."""


def clean_text(text: str) -> str:
    """Strip control characters (but keep newlines and tabs) and surrounding whitespace."""
    return "".join(
        char for char in text if char in "\n\t" or unicodedata.category(char)[0] != "C"
    ).strip()


def content_hash(text: str) -> str:
    """A stable fingerprint of a note's meaning-bearing text, for de-duplication."""
    normalised = "".join(unicodedata.normalize("NFKC", text).split()).lower()
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


@dataclass
class NoteDraft:
    """Everything needed to store a note; provenance included."""

    firm: Firm
    content: str
    memory_scope: str
    category: str
    source_type: str
    memory_type: str = MemoryType.FACT
    keywords: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    context: str = ""
    importance: float = 0.5
    confidence: float = 0.8
    matter: Matter | None = None
    owner: Any = None
    conversation: Conversation | None = None
    subject: str = ""
    source_id: str = ""
    source_message_ids: list[int] = field(default_factory=list)
    speaker: str = ""
    said_at: datetime | None = None
    # What the client said in the turn the note comes from (not stored): routing reads its
    # correction cue when the extractor's wording dropped it (docs/routing.md).
    said: str = ""

    @classmethod
    def from_note(cls, note: Note) -> "NoteDraft":
        """The draft a stored note would have been made from (to re-validate a correction)."""
        return cls(
            firm=note.firm,
            content=note.content,
            memory_scope=note.memory_scope,
            category=note.category,
            source_type=note.source_type,
            memory_type=note.memory_type,
            keywords=list(note.keywords),
            tags=list(note.tags),
            context=note.context,
            importance=note.importance,
            confidence=note.confidence,
            matter=note.matter,
            owner=note.owner,
            conversation=note.conversation,
            subject=note.subject,
        )

    def validate(self) -> None:
        self.content = clean_text(self.content)
        if not self.content:
            raise NoteValidationError("a note needs content")
        if len(self.content) > MAX_NOTE_CHARS:
            raise NoteValidationError(f"a note holds at most {MAX_NOTE_CHARS} characters")
        _check_choice("memory_scope", self.memory_scope, MemoryScope)
        _check_choice("category", self.category, Category)
        _check_choice("memory_type", self.memory_type, MemoryType)
        _check_choice("source_type", self.source_type, SourceType)
        for name in ("importance", "confidence"):
            value = getattr(self, name)
            if not 0.0 <= float(value) <= 1.0:
                raise NoteValidationError(f"{name} must be between 0 and 1, got {value}")
        if self.matter is not None and self.matter.firm_id != self.firm.pk:
            raise NoteValidationError("the matter belongs to another firm")
        if self.conversation is not None and self.conversation.firm_id != self.firm.pk:
            raise NoteValidationError("the conversation belongs to another firm")
        if self.owner is not None and self.__dict__.get("_member_checked") != (self.owner.pk, self.firm.pk):
            is_member = remembered(("member", self.owner.pk, self.firm.pk),
                                   lambda: self.owner.memberships.filter(firm=self.firm).exists())
            if not is_member:
                raise NoteValidationError("the owner is not a member of the note's firm")
            # routing validates the draft, then create_note does: one query is enough
            self.__dict__["_member_checked"] = (self.owner.pk, self.firm.pk)
        if self.memory_scope == MemoryScope.USER_PROFILE and self.owner is None:
            raise NoteValidationError("a user-profile note needs an owner")
        if self.memory_scope == MemoryScope.CASE and self.matter is None and self.owner is None:
            raise NoteValidationError("a case note needs a matter or an owner")
        self.keywords = [clean_text(k)[:100] for k in self.keywords if clean_text(k)]
        self.tags = [clean_text(t)[:100] for t in self.tags if clean_text(t)]


def _check_choice(name: str, value: str, choices: type) -> None:
    if value not in choices.values:
        raise NoteValidationError(
            f"unknown {name} {value!r}; expected one of {', '.join(choices.values)}"
        )


def embed_note_text(text: str) -> tuple[np.ndarray, str]:
    embedder = get_embedder()
    return embedder.embed_passages([text])[0], embedder.name


def world_start(content: str, said_at: datetime | None) -> datetime:
    """When a note's fact began to hold (world time, ``valid_from``): the day its own words give
    ("2024年3月起租金5000元", "自2026年4月1日起…", "effective from 1 April 2026":
    ``legaltext.as_of.held_from``), else when it was said (docs/memory-model.md, "Two times")."""
    said = said_at or timezone.now()
    found = held_from(content, timezone.localtime(said).date())
    if found is None:
        return said
    return timezone.make_aware(datetime.combine(found[0], time.min))


def create_note(draft: NoteDraft, *, actor, embedding: np.ndarray | None = None, savepoint: bool = True) -> Note:
    """Validate, embed (outside the transaction), store and audit one note. ``savepoint=False``:
    the caller's transaction rolls back as a whole on any error (routing's one transaction per
    item), so the nested block needs no savepoint — two round trips fewer (docs/performance.md)."""
    draft.validate()
    model_name = ""
    if embedding is None:
        embedding, model_name = embed_note_text(draft.content)
    else:
        model_name = get_embedder().name
    with transaction.atomic(savepoint=savepoint):
        note = Note.objects.create(
            firm=draft.firm,
            content=draft.content,
            memory_scope=draft.memory_scope,
            category=draft.category,
            memory_type=draft.memory_type,
            keywords=draft.keywords,
            tags=draft.tags,
            context=clean_text(draft.context),
            importance=draft.importance,
            confidence=draft.confidence,
            matter=draft.matter,
            owner=draft.owner,
            conversation=draft.conversation,
            subject=draft.subject,
            source_type=draft.source_type,
            source_id=draft.source_id,
            source_message_ids=draft.source_message_ids,
            speaker=draft.speaker,
            said_at=draft.said_at,
            valid_from=world_start(draft.content, draft.said_at),
            content_hash=content_hash(draft.content),
            search_text=search_text(draft.content),
            embedding=embedding,
            embedding_model=model_name,
        )
        record_note_event(actor=actor, event=AuditEvent.NOTE_CREATED, note=note, after=note.snapshot())
    return note


def correct_note(note: Note, changes: dict[str, Any], *, actor, reason: str = "") -> Note:
    """A person's correction of a note: recorded in its history and in the audit log."""
    unknown = set(changes) - set(CORRECTABLE_FIELDS)
    if unknown:
        raise NoteValidationError(f"these fields cannot be corrected: {', '.join(sorted(unknown))}")
    before = note.snapshot()
    diff = {
        name: [before.get(name), value]
        for name, value in changes.items()
        if before.get(name) != value
    }
    if not diff:
        return note
    for name, value in changes.items():
        setattr(note, name, value)
    draft = NoteDraft.from_note(note)
    draft.validate()
    note.content, note.keywords, note.tags = draft.content, draft.keywords, draft.tags
    if "content" in diff:
        note.embedding, note.embedding_model = embed_note_text(note.content)
        note.content_hash = content_hash(note.content)
        note.search_text = search_text(note.content)
    with transaction.atomic():
        note.append_history("corrected", diff, by=actor_label(actor), reason=reason)
        note.save()
        record_note_event(
            actor=actor,
            event=AuditEvent.NOTE_UPDATED,
            note=note,
            before=before,
            after=note.snapshot(),
            reason=reason,
        )
        settle_contradictions(note, actor=actor)
    return note


def settle_contradictions(note: Note, *, actor) -> int:
    """A person's correction settles what the note says: its ``contradicts`` links to current
    notes are removed, each with an audit entry keeping the link (docs/memory-model.md,
    "Contradictions"). Links to notes no longer current stay, as history. Returns how many."""
    links = (
        NoteLink.objects.filter(link_type=LinkType.CONTRADICTS)
        .filter(Q(source=note, target__status=Note.Status.ACTIVE) | Q(target=note, source__status=Note.Status.ACTIVE))
        .select_related("source", "target")
    )
    removed = 0
    with transaction.atomic():
        for link in links:
            source, target = link.source, link.target
            private = source.private_to() or target.private_to()
            record(
                actor=actor,
                event=AuditEvent.LINK_DELETED,
                firm_id=source.firm_id,
                object_type="link",
                object_id=link.pk,
                before={"source": str(source.pk), "target": str(target.pk), "link_type": link.link_type,
                        "weight": link.weight, "reason": link.reason},
                matter_id=source.matter_id or target.matter_id,
                private_to_id=private.pk if private else None,
                reason="settled by a correction",
                corrected_note=str(note.pk),
            )
            link.delete()
            removed += 1
    return removed


def evolve_note(
    note: Note,
    *,
    actor,
    triggered_by: Note,
    context: str | None = None,
    tags: list[str] | None = None,
    savepoint: bool = True,
) -> Note:
    """A-Mem evolution: a new note refines a neighbour's context and tags (``savepoint`` as in
    ``create_note``)."""
    before = note.snapshot()
    diff: dict[str, list[Any]] = {}
    if context is not None and clean_text(context) != note.context:
        diff["context"] = [note.context, clean_text(context)]
        note.context = clean_text(context)
    if tags is not None:
        merged = list(dict.fromkeys([*note.tags, *[clean_text(t) for t in tags if clean_text(t)]]))
        if merged != list(note.tags):
            diff["tags"] = [list(note.tags), merged]
            note.tags = merged
    if not diff:
        return note
    with transaction.atomic(savepoint=savepoint):
        note.append_history("evolved", diff, triggered_by=str(triggered_by.pk))
        note.save(update_fields=["context", "tags", "evolution_history", "updated_at"])
        record_note_event(
            actor=actor,
            event=AuditEvent.NOTE_EVOLVED,
            note=note,
            before=before,
            after=note.snapshot(),
            triggered_by=str(triggered_by.pk),
        )
    return note


def delete_note(note: Note, *, actor, reason: str = "") -> None:
    """Delete a note for good (it never comes back in search); the audit log keeps its last state."""
    with transaction.atomic():
        note = Note.objects.select_for_update().get(pk=note.pk)
        before = note.snapshot()
        link_count = NoteLink.objects.filter(source=note).count() + NoteLink.objects.filter(
            target=note
        ).count()
        for older in Note.objects.filter(superseded_by=note):
            older.append_history("successor_deleted", {"superseded_by": [str(note.pk), None]})
            older.superseded_by = None
            older.save(update_fields=["superseded_by", "evolution_history", "updated_at"])
        record_note_event(
            actor=actor,
            event=AuditEvent.NOTE_DELETED,
            note=note,
            before=before,
            reason=reason,
            links_removed=link_count,
        )
        note.delete()


def forget_note(note: Note, *, user, reason: str = "", via: str = "my_memory") -> Note:
    """A user's "forget this memory": the note is retired (status forgotten, validity closed)
    and never recalled again; the row stays for the audit trail, so an auditor can still see
    what was forgotten, by whom and why (docs/my-memory-and-admin.md). Erasing the content
    itself is the firm's erasure procedure, not this. ``via`` names where it was asked (the
    page, or ``mcp`` for an assistant connected with an access token)."""
    with transaction.atomic():
        if not Note.objects.changeable_by(user).filter(pk=note.pk).exists():
            raise NoteNotChangeable("you may not forget this note")
        note = Note.objects.select_for_update().get(pk=note.pk)
        if note.status == Note.Status.FORGOTTEN:
            raise NoteValidationError("this note is already forgotten")
        before = note.snapshot()
        now = timezone.now()
        reason = clean_text(reason)[:500]
        changes: dict[str, list[Any]] = {"status": [note.status, Note.Status.FORGOTTEN]}
        if note.valid_to is None:
            changes["valid_to"] = [None, now.isoformat()]
            note.valid_to = now
        changes["retired_at"] = [note.retired_at.isoformat() if note.retired_at else None, now.isoformat()]
        note.retired_at = now
        note.status = Note.Status.FORGOTTEN
        note.append_history("forgotten", changes, by=actor_label(user), reason=reason)
        note.save(update_fields=["status", "valid_to", "retired_at", "evolution_history", "updated_at"])
        record_note_event(
            actor=user, event=AuditEvent.NOTE_FORGOTTEN, note=note, before=before,
            after=note.snapshot(), reason=reason, via=via,
        )
    return note


def restore_forgotten_note(note: Note, *, actor, reason: str = "") -> Note:
    """An auditor's undo of a user's "forget": the note returns to the status and validity it
    had before (current, or superseded with its window), and may be recalled again. Audited."""
    with transaction.atomic():
        note = Note.objects.select_for_update().get(pk=note.pk)
        if note.status != Note.Status.FORGOTTEN:
            raise NoteValidationError("only a forgotten note can be restored")
        forgotten = next(
            (step for step in reversed(note.evolution_history) if step.get("event") == "forgotten"), {}
        )
        earlier = forgotten.get("changes", {})
        before = note.snapshot()
        status = earlier.get("status", [Note.Status.ACTIVE])[0]
        changes: dict[str, list[Any]] = {"status": [note.status, status]}
        if "valid_to" in earlier:
            changes["valid_to"] = [note.valid_to.isoformat() if note.valid_to else None, earlier["valid_to"][0]]
            note.valid_to = None if earlier["valid_to"][0] is None else datetime.fromisoformat(earlier["valid_to"][0])
        earlier_retired = earlier.get("retired_at", [None])[0]  # a superseded note's retirement stays
        changes["retired_at"] = [note.retired_at.isoformat() if note.retired_at else None, earlier_retired]
        if earlier_retired is not None:
            note.retired_at = datetime.fromisoformat(earlier_retired)
        else:  # current again; or superseded before a forget recorded its retirement: its window's end
            note.retired_at = note.valid_to if status == Note.Status.SUPERSEDED else None
        note.status = status
        note.append_history("restored", changes, by=actor_label(actor), reason=clean_text(reason)[:500])
        note.save(update_fields=["status", "valid_to", "retired_at", "evolution_history", "updated_at"])
        record_note_event(
            actor=actor, event=AuditEvent.NOTE_UPDATED, note=note, before=before,
            after=note.snapshot(), reason=reason or "restored after being forgotten",
        )
    return note


def correct_own_note(note: Note, changes: dict[str, Any], *, user, reason: str = "") -> Note:
    """A user's correction from the "my memory" page: only of a current note they may change
    (``changeable_by``); then the same audited ``correct_note`` as an auditor's."""
    if not Note.objects.changeable_by(user).filter(pk=note.pk).exists():
        raise NoteNotChangeable("you may not correct this note")
    if note.status != Note.Status.ACTIVE:
        raise NoteValidationError("only a current note can be corrected")
    return correct_note(note, changes, actor=user, reason=clean_text(reason)[:500] or "corrected by its user")


def link_notes(
    source: Note,
    target: Note,
    *,
    link_type: str,
    weight: float,
    actor,
    reason: str = "",
    savepoint: bool = True,
) -> NoteLink:
    """Create (or return) a typed, weighted link between two notes of one firm (``savepoint``
    as in ``create_note``)."""
    _check_link(source, target, link_type)
    with transaction.atomic(savepoint=savepoint):
        # One statement for the usual case (a new edge) instead of get_or_create's four
        # (docs/performance.md); an existing edge is read and returned unchanged.
        created = _insert_links([PlannedLink(source, target, link_type, weight, reason)])
        if not created:
            return NoteLink.objects.get(source=source, target=target, link_type=link_type)
        _record_link_created(created[0], actor=actor)
    return created[0]


@dataclass(frozen=True)
class PlannedLink:
    """One edge routing wants between a new note and another (``link_notes_in_bulk``)."""

    source: Note
    target: Note
    link_type: str
    weight: float
    reason: str = ""


def link_notes_in_bulk(links: list[PlannedLink], *, actor) -> int:
    """``link_notes`` for several edges in one INSERT (routing links a new note to its
    neighbours, its matter and its siblings at once: docs/performance.md). An edge that exists
    — or appears twice in ``links`` — is left as it is (the first weight wins, as one call after
    another would); each new edge is audited, in order. Returns how many were created."""
    for link in links:
        _check_link(link.source, link.target, link.link_type)
    if not links:
        return 0
    created = _insert_links(links)
    for link in created:
        _record_link_created(link, actor=actor)
    return len(created)


def _check_link(source: Note, target: Note, link_type: str) -> None:
    if source.firm_id != target.firm_id:
        raise NoteValidationError("notes of different firms cannot be linked")
    if source.pk == target.pk:
        raise NoteValidationError("a note cannot link to itself")
    _check_choice("link_type", link_type, LinkType)


def _insert_links(links: list[PlannedLink]) -> list[NoteLink]:
    """ONE ``INSERT … ON CONFLICT DO NOTHING RETURNING`` for every edge: the links created, in
    the order of ``links`` (an edge that existed, or repeats an earlier one of ``links``, is not
    among them)."""
    now = timezone.now()
    values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(links))
    params: list[Any] = []
    for link in links:
        params += [link.source.firm_id, link.source.pk, link.target.pk, link.link_type, link.weight,
                   link.reason[:300], now]
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {NoteLink._meta.db_table} (firm_id, source_id, target_id, link_type, weight, reason, created_at)"
            f" VALUES {values} ON CONFLICT (source_id, target_id, link_type) DO NOTHING"
            " RETURNING id, source_id, target_id, link_type",
            params,
        )
        created = {(source_id, target_id, link_type): pk for pk, source_id, target_id, link_type in cursor.fetchall()}
    new_links = []
    for planned in links:
        pk = created.pop((planned.source.pk, planned.target.pk, planned.link_type), None)
        if pk is None:
            continue  # existed already, or a repeat of an edge of this batch
        link = NoteLink(pk=pk, firm_id=planned.source.firm_id, source=planned.source, target=planned.target,
                        link_type=planned.link_type, weight=planned.weight, reason=planned.reason[:300], created_at=now)
        link._state.adding = False
        link._state.db = "default"
        new_links.append(link)
    return new_links


def _record_link_created(link: NoteLink, *, actor) -> None:
    """The audit entry of a new link: as walled as the more private of its two notes."""
    source, target = link.source, link.target
    matter_id = source.matter_id or target.matter_id
    private = source.private_to() or target.private_to()
    record(
        actor=actor,
        event=AuditEvent.LINK_CREATED,
        firm_id=source.firm_id,
        object_type="link",
        object_id=link.pk,
        after={
            "source": str(source.pk),
            "target": str(target.pk),
            "link_type": link.link_type,
            "weight": link.weight,
            "reason": link.reason,
        },
        matter_id=matter_id,
        private_to_id=private.pk if private else None,
    )


def supersede_note(old: Note, new: Note, *, actor, reason: str, savepoint: bool = True) -> Note:
    """AdaMem UPDATE: ``new`` replaces ``old``. The old version stays, closed (status
    superseded, ``valid_to``), pointing at its successor; both changes are audited and a
    ``supersedes`` link joins them. Nothing is overwritten or deleted."""
    if old.firm_id != new.firm_id:
        raise NoteValidationError("notes of different firms cannot supersede each other")
    if old.pk == new.pk:
        raise NoteValidationError("a note cannot supersede itself")
    with transaction.atomic(savepoint=savepoint):
        old = Note.objects.select_for_update().get(pk=old.pk)
        if old.status != Note.Status.ACTIVE:
            raise NoteValidationError(f"note {old.pk} is already {old.status}")
        before = old.snapshot()
        # The old fact stopped holding when its successor began to hold — when it was said, or
        # the day its words give ("自4月1日起…") — never before it started.
        now = max(new.valid_from, old.valid_from)
        old.status = Note.Status.SUPERSEDED
        old.valid_to = now
        old.retired_at = timezone.now()  # system time: when the memory stopped holding it current
        old.superseded_by = new
        old.append_history(
            "superseded",
            {"status": [Note.Status.ACTIVE, Note.Status.SUPERSEDED], "valid_to": [None, now.isoformat()]},
            by=actor_label(actor),
            superseded_by=str(new.pk),
            reason=reason,
        )
        old.save(update_fields=["status", "valid_to", "retired_at", "superseded_by", "evolution_history", "updated_at"])
        record_note_event(
            actor=actor, event=AuditEvent.NOTE_SUPERSEDED, note=old, before=before,
            after=old.snapshot(), reason=reason, superseded_by=str(new.pk),
        )
        new_before = new.snapshot()
        new.append_history(
            "supersedes", {}, by=actor_label(actor), supersedes=str(old.pk),
            previous_content=old.content, previous_valid_from=old.valid_from.isoformat(), reason=reason,
        )
        new.save(update_fields=["evolution_history", "updated_at"])
        record_note_event(
            actor=actor, event=AuditEvent.NOTE_UPDATED, note=new, before=new_before,
            after=new.snapshot(), reason=reason, supersedes=str(old.pk),
        )
        link_notes(new, old, link_type=LinkType.SUPERSEDES, weight=1.0, actor=actor, reason=reason, savepoint=savepoint)
    return new


def record_mention(
    note: Note, *, actor, source: str | None, confidence: float | None = None,
    source_message_ids: list[int] | None = None, savepoint: bool = True,
    mentions: int | None = None, event: str = "mentioned", reason: str = "mentioned again",
    details: dict[str, Any] | None = None,
) -> Note:
    """The same knowledge was stated again: count it and, if a confidence is given, move the
    note's confidence gradually towards it (0.9 × old + 0.1 × new). Audited.

    ``mentions`` sets the count instead of adding one, under its own history ``event``, audit
    ``reason`` and ``details`` (a persona promotion counts its evidence: ``"promoted"``)."""
    with transaction.atomic(savepoint=savepoint):
        note = Note.objects.select_for_update().get(pk=note.pk)
        before = note.snapshot()
        count = note.mention_count + 1 if mentions is None else mentions
        changes: dict[str, list[Any]] = {"mention_count": [note.mention_count, count]}
        note.mention_count = count
        if confidence is not None:
            blended = round(min(1.0, max(0.0, 0.9 * note.confidence + 0.1 * float(confidence))), 4)
            if blended != note.confidence:
                changes["confidence"] = [note.confidence, blended]
                note.confidence = blended
        new_ids = [i for i in (source_message_ids or []) if i not in note.source_message_ids]
        if new_ids:
            changes["source_message_ids"] = [list(note.source_message_ids), [*note.source_message_ids, *new_ids]]
            note.source_message_ids = [*note.source_message_ids, *new_ids]
        where = {"source": source} if source is not None else {}
        note.append_history(event, changes, by=actor_label(actor), **where, **(details or {}))
        note.save(update_fields=["mention_count", "confidence", "source_message_ids", "evolution_history", "updated_at"])
        record_note_event(
            actor=actor, event=AuditEvent.NOTE_UPDATED, note=note, before=before,
            after=note.snapshot(), reason=reason, **where,
        )
    return note
