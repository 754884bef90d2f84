"""What one erasure unit holds: every row that carries its content (docs/records.md, "Erasure").

A unit is a matter, a conversation, a user's data in one firm, or a subject (a client or
party named in the firm's memory). ``collect`` reads the rows to delete and the surviving
rows to scrub; it is run twice: for the dry run / confirmation page, and again inside the
erasure's transaction after the unit's turn jobs are locked.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Callable

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db.models import Q
from django.utils.translation import gettext

from memory.labels import unit_label
from records.fingerprints import Fingerprints, digest, normalized, proper_names
from memory.models import (
    AuditEvent,
    AuditLog,
    Consolidation,
    ConsolidatedMessage,
    Conversation,
    Firm,
    Matter,
    Message,
    Note,
    NoteLink,
    PersonaEvidence,
    PersonaTrait,
    RoutingDecision,
    SourceType,
    TurnExtraction,
)
from documents.models import Document, DocumentChunk, DocumentPage


class ErasureError(ValueError):
    """The unit cannot be erased as asked (unknown, ambiguous, or on legal hold); nothing changed."""


@dataclass(frozen=True)
class Unit:
    """What is erased. ``object_type`` / ``object_id`` name it in the tombstone without its content."""

    kind: str
    firm: Firm
    object_type: str
    object_id: str
    label: str
    matter: Matter | None = None
    conversation_id: int | None = None
    user: object | None = None
    subject: str = ""
    rows: dict | None = None  # a replayed erasure: the ids its journal entry names (records.journal)
    fingerprints: dict | None = None  # a replayed erasure: its journal entry's fingerprints (audit rows by content)

    @property
    def shown(self) -> str:
        """The unit in the reader's language ("matter M-006" → 案件 M-006); ``label`` is what the
        tombstone stores."""
        return unit_label(self.kind, self.label.partition(" ")[2])

    def previous_tombstone(self) -> AuditLog | None:
        """The tombstone of an earlier erasure of this same unit, if any."""
        return (
            AuditLog.objects.filter(
                event_type=AuditEvent.ERASED, firm=self.firm,
                object_type=self.object_type, object_id=self.object_id,
            ).order_by("-created_at", "-id").first()
        )


def matter_unit(matter: Matter, *, kind: str = "matter") -> Unit:
    return Unit(kind=kind, firm=matter.firm, object_type="matter", object_id=str(matter.pk),
                label=f"matter {matter.reference or matter.pk}", matter=matter)


def conversation_unit(firm: Firm, conversation_id: int) -> Unit:
    return Unit(kind="conversation", firm=firm, object_type="conversation", object_id=str(conversation_id),
                label=f"conversation {conversation_id}", conversation_id=conversation_id)


def user_unit(firm: Firm, user) -> Unit:
    return Unit(kind="user", firm=firm, object_type="user", object_id=str(user.pk),
                label=f"user {user.pk}", user=user)


def replay_unit(entry: dict) -> Unit:
    """An erasure of the journal (records.journal) again, after a restore: the same rows by id."""
    firm = Firm.objects.get(pk=entry["firm"])
    matter = Matter.objects.filter(pk=entry.get("matter"), firm=firm).first() if entry.get("matter") else None
    return Unit(kind=entry["kind"], firm=firm, object_type=entry["object_type"], object_id=entry["object_id"],
                label=entry["label"], matter=matter, rows=entry["rows"], fingerprints=entry.get("fingerprints"))


def journal_rows(plan: Plan) -> dict[str, list]:
    """The ids a journal entry keeps of a plan (no content)."""
    return {"conversations": sorted(plan.conversations), "messages": sorted(plan.messages),
            "notes": sorted(plan.notes), "retitled_conversations": sorted(plan.retitled_conversations),
            "traits": sorted(plan.traits), "evidence": sorted(plan.evidence),
            "documents": sorted(plan.documents), "audit_entries": sorted(plan.audit_entries)}


def subject_hash(firm: Firm, subject: str) -> str:
    """The tombstone's name for a subject: a keyed digest, never the name itself."""
    return hashlib.sha256(f"{firm.pk}:{subject.casefold().strip()}".encode()).hexdigest()


def subject_unit(firm: Firm, subject: str) -> Unit:
    subject = subject.strip()
    if len(subject) < 2:
        raise ErasureError(gettext("the subject must be at least two characters (a name, not a letter)"))
    digest = subject_hash(firm, subject)
    return Unit(kind="subject", firm=firm, object_type="subject", object_id=digest,
                label=f"subject {digest[:12]}", subject=subject)


@dataclass
class Plan:
    """Row ids to delete, rows to scrub, and the counts a person confirms."""

    conversations: set[int] = field(default_factory=set)
    retitled_conversations: set[int] = field(default_factory=set)  # kept, title naming the subject blanked
    messages: set[int] = field(default_factory=set)
    turns: set[int] = field(default_factory=set)
    consolidations: set[int] = field(default_factory=set)       # deleted with their marks
    scrubbed_consolidations: set[int] = field(default_factory=set)  # kept, items cleared
    decisions: set[int] = field(default_factory=set)
    notes: set[str] = field(default_factory=set)
    traits: set[int] = field(default_factory=set)
    evidence: set[int] = field(default_factory=set)
    audit_entries: set[int] = field(default_factory=set)
    documents: set[int] = field(default_factory=set)  # with their pages, chunks and (unshared) files
    document_notes: set[str] = field(default_factory=set)  # notes made from those documents (also in ``notes``)
    matters: set[int] = field(default_factory=set)  # matters the unit touches (legal hold)

    def counts(self) -> dict[str, int]:
        links = NoteLink.objects.filter(Q(source_id__in=self.notes) | Q(target_id__in=self.notes)).count()
        return {
            "notes": len(self.notes),
            "links": links,
            "messages": len(self.messages),
            "conversations": len(self.conversations),
            "conversations_retitled": len(self.retitled_conversations),
            "turn_extractions": len(self.turns),
            "routing_decisions": len(self.decisions),
            "consolidations": len(self.consolidations) + len(self.scrubbed_consolidations),
            "persona_traits": len(self.traits),
            "persona_evidence": len(self.evidence),
            "audit_entries_redacted": len(self.audit_entries),
            "documents": len(self.documents),
            "document_pages": DocumentPage.objects.filter(document_id__in=self.documents).count(),
            "document_chunks": DocumentChunk.objects.filter(document_id__in=self.documents).count(),
            "document_files": len(self.unshared_files()),
            "notes_from_documents": len(self.document_notes),
        }

    def unshared_files(self) -> set[str]:
        """The hashes of the stored files only the erased documents refer to (they go too)."""
        hashes = set(Document.objects.filter(pk__in=self.documents).values_list("sha256", flat=True))
        kept = set(Document.objects.filter(sha256__in=hashes).exclude(pk__in=self.documents)
                   .values_list("sha256", flat=True))
        return hashes - kept

    def is_empty(self) -> bool:
        return not (self.notes or self.messages or self.conversations or self.traits or self.evidence
                    or self.retitled_conversations or self.documents or self.audit_entries)


def _ids(queryset) -> set:
    return set(queryset.values_list("pk", flat=True))


def _seed(unit: Unit, plan: Plan) -> None:
    """The rows the unit names directly."""
    firm = unit.firm
    if unit.rows is not None:
        rows = unit.rows
        plan.conversations |= _ids(Conversation.objects.filter(firm=firm, pk__in=rows["conversations"]))
        plan.retitled_conversations |= _ids(Conversation.objects.filter(firm=firm, pk__in=rows["retitled_conversations"]))
        plan.messages |= _ids(Message.objects.filter(firm=firm, pk__in=rows["messages"]))
        plan.notes |= {str(pk) for pk in _ids(Note.objects.filter(firm=firm, pk__in=rows["notes"]))}
        plan.traits |= _ids(PersonaTrait.objects.filter(firm=firm, pk__in=rows["traits"]))
        plan.evidence |= _ids(PersonaEvidence.objects.filter(firm=firm, pk__in=rows["evidence"]))
        plan.documents |= _ids(Document.objects.filter(firm=firm, pk__in=rows.get("documents", [])))
    if unit.matter is not None:
        plan.documents |= _ids(Document.objects.filter(matter=unit.matter))
        plan.conversations |= _ids(Conversation.objects.filter(matter=unit.matter))
        plan.notes |= {str(pk) for pk in _ids(Note.objects.filter(matter=unit.matter))}
        plan.decisions |= _ids(RoutingDecision.objects.filter(matter=unit.matter))
    elif unit.conversation_id is not None:
        plan.conversations |= _ids(Conversation.objects.filter(pk=unit.conversation_id, firm=firm))
    elif unit.user is not None:
        plan.conversations |= _ids(Conversation.objects.filter(user=unit.user, firm=firm))
        plan.notes |= {str(pk) for pk in _ids(Note.objects.filter(firm=firm, owner=unit.user))}
        plan.traits |= _ids(PersonaTrait.objects.filter(firm=firm, user=unit.user))
    elif unit.subject and unit.rows is None:
        name = unit.subject
        plan.messages |= _ids(Message.objects.filter(firm=firm, content__icontains=name))
        plan.notes |= {str(pk) for pk in _ids(Note.objects.filter(firm=firm).filter(
            Q(subject__iexact=name) | Q(content__icontains=name) | Q(context__icontains=name)
        ))}
        plan.turns |= _ids(TurnExtraction.objects.filter(firm=firm, items__icontains=name))
        plan.decisions |= _ids(RoutingDecision.objects.filter(firm=firm, content__icontains=name))
        plan.evidence |= _ids(PersonaEvidence.objects.filter(firm=firm, content__icontains=name))
        plan.traits |= _ids(PersonaTrait.objects.filter(firm=firm, content__icontains=name))
        plan.scrubbed_consolidations |= _ids(Consolidation.objects.filter(firm=firm, items__icontains=name))
        plan.retitled_conversations |= _ids(Conversation.objects.filter(firm=firm, title__icontains=name))
        plan.documents |= subject_documents(firm, name)


def subject_documents(firm: Firm, name: str) -> set[int]:
    """The firm's documents that name the subject: in the title, the file name, the e-mail
    headers or the text of any page (an e-mail's attachments go only if they name it too)."""
    return _ids(Document.objects.filter(firm=firm).filter(
        Q(title__icontains=name) | Q(filename__icontains=name) | Q(headers__icontains=name)
        | Q(pk__in=DocumentPage.objects.filter(text__icontains=name).values("document_id"))
    ))


def _document_notes(plan: Plan) -> None:
    """The notes and routing decisions made from the erased documents' chunks (source
    ``document:<id>:p…``, decision key ``document-chunk:<chunk id>``)."""
    if not plan.documents:
        return
    made = Q(pk__in=[])
    for document_id in plan.documents:
        made |= Q(source_id__startswith=f"document:{document_id}:")
    plan.document_notes = {str(pk) for pk in _ids(Note.objects.filter(source_type=SourceType.DOCUMENT).filter(made))}
    plan.notes |= plan.document_notes
    chunks = DocumentChunk.objects.filter(document_id__in=plan.documents).values_list("pk", flat=True)
    plan.decisions |= _ids(RoutingDecision.objects.filter(source_key__in=[f"document-chunk:{pk}" for pk in chunks]))


def _expand(plan: Plan) -> None:
    """Everything derived from the seeded rows: messages of conversations, both messages of a
    turn, notes written from erased turns or messages, persona traits built on erased evidence."""
    _document_notes(plan)
    plan.messages |= _ids(Message.objects.filter(conversation_id__in=plan.conversations))
    plan.turns |= _ids(TurnExtraction.objects.filter(
        Q(conversation_id__in=plan.conversations) | Q(user_message_id__in=plan.messages)
        | Q(assistant_message_id__in=plan.messages)
    ))
    for user_id, reply_id in TurnExtraction.objects.filter(pk__in=plan.turns).values_list(
            "user_message_id", "assistant_message_id"):
        plan.messages |= {user_id, reply_id}
    marked = Consolidation.objects.filter(messages__message_id__in=plan.messages)
    plan.consolidations |= _ids(Consolidation.objects.filter(conversation_id__in=plan.conversations))
    plan.scrubbed_consolidations |= _ids(marked) - plan.consolidations
    plan.scrubbed_consolidations -= plan.consolidations
    source_keys = [f"turn:{pk}" for pk in plan.turns] + [f"consolidation:{pk}" for pk in plan.consolidations]
    plan.decisions |= _ids(RoutingDecision.objects.filter(
        Q(turn_id__in=plan.turns) | Q(consolidation_id__in=plan.consolidations) | Q(source_key__in=source_keys)
    ))
    written = RoutingDecision.objects.filter(
        pk__in=plan.decisions, action__in=[RoutingDecision.Action.ADD, RoutingDecision.Action.UPDATE],
        note__isnull=False,
    ).values_list("note_id", flat=True)
    plan.notes |= {str(pk) for pk in written}
    plan.notes |= {str(pk) for pk in _ids(Note.objects.filter(conversation_id__in=plan.conversations))}
    if plan.messages:
        # A note is the unit's when every message it came from is erased (one also said
        # elsewhere keeps its other sources and only loses the erased ids).
        for pk, sources in Note.objects.filter(source_message_ids__overlap=list(plan.messages)).values_list(
                "pk", "source_message_ids"):
            if set(sources) <= plan.messages:
                plan.notes.add(str(pk))
    plan.evidence |= _ids(PersonaEvidence.objects.filter(
        Q(conversation_id__in=plan.conversations) | Q(source_key__in=source_keys)
        | Q(source_message_ids__overlap=list(plan.messages) or [0])
    ))
    # A trait is the statement of its evidence: it goes with any erased evidence, and its
    # remaining evidence and promoted profile note go with it (it re-forms from new statements).
    plan.traits |= set(PersonaEvidence.objects.filter(pk__in=plan.evidence).values_list("trait_id", flat=True))
    plan.evidence |= _ids(PersonaEvidence.objects.filter(trait_id__in=plan.traits))
    plan.notes |= {str(pk) for pk in PersonaTrait.objects.filter(pk__in=plan.traits, note__isnull=False)
                   .values_list("note_id", flat=True)}
    plan.decisions |= _ids(RoutingDecision.objects.filter(
        note_id__in=plan.notes, action__in=[RoutingDecision.Action.ADD, RoutingDecision.Action.UPDATE]
    ))


def _touched_matters(unit: Unit, plan: Plan) -> None:
    plan.matters |= set(Note.objects.filter(pk__in=plan.notes, matter__isnull=False).values_list("matter_id", flat=True))
    plan.matters |= set(Conversation.objects.filter(
        Q(pk__in=plan.conversations) | Q(messages__in=plan.messages), matter__isnull=False
    ).values_list("matter_id", flat=True))
    plan.matters |= set(Document.objects.filter(pk__in=plan.documents).values_list("matter_id", flat=True))
    if unit.matter is not None:
        plan.matters.add(unit.matter.pk)


def _audit_entries(unit: Unit, plan: Plan) -> None:
    """Earlier audit entries that quote the unit's content (redacted, never deleted)."""
    notes = list(plan.notes)
    quoting = (
        Q(object_type="note", object_id__in=notes)
        | Q(object_type="link", after__source__in=notes) | Q(object_type="link", after__target__in=notes)
        | Q(extra__triggered_by__in=notes) | Q(extra__supersedes__in=notes) | Q(extra__superseded_by__in=notes)
        | Q(object_type="turn_extraction", object_id__in=[str(pk) for pk in plan.turns])
        | Q(object_type="conversation", object_id__in=[str(pk) for pk in plan.conversations])
        | Q(object_type="document", object_id__in=[str(pk) for pk in plan.documents])
    )
    if unit.rows is not None:
        quoting |= Q(pk__in=unit.rows.get("audit_entries", []))
    if unit.matter is not None:
        quoting |= Q(object_type="matter", object_id=str(unit.matter.pk))
    if unit.subject:
        name = unit.subject
        quoting |= Q(before__icontains=name) | Q(after__icontains=name) | Q(extra__icontains=name)
    unredacted = AuditLog.objects.filter(firm=unit.firm).exclude(event_type=AuditEvent.ERASED).exclude(
        extra__has_key="redacted_by")
    plan.audit_entries = _ids(unredacted.filter(quoting))
    if unit.fingerprints:
        plan.audit_entries |= audit_entries_matching(unredacted, Fingerprints.from_json(unit.fingerprints))


def audit_entries_matching(entries, fingerprints: Fingerprints) -> set[int]:
    """A replayed erasure's audit rows found by content: those whose before, after or extra hold
    one of the erased strings' fingerprints that no surviving row shared (a file name naming the
    subject in ``document_uploaded``, found after a restore though the journal names no such row)."""
    fingerprints = fingerprints.unshared()
    found = set()
    for pk, before, after, extra in entries.values_list("pk", "before", "after", "extra").iterator(chunk_size=2000):
        if fingerprints.matches(json.dumps([before, after, extra], ensure_ascii=False)):
            found.add(pk)
    return found


def collect(unit: Unit) -> Plan:
    """Every row of the unit (see the module docstring)."""
    plan = Plan()
    _seed(unit, plan)
    _expand(plan)
    plan.retitled_conversations -= plan.conversations
    _touched_matters(unit, plan)
    _audit_entries(unit, plan)
    return plan


def held_matters(plan: Plan) -> list[Matter]:
    return list(Matter.objects.filter(pk__in=plan.matters, legal_hold=True).order_by("pk"))


def quoting_subject(unit: Unit) -> Callable[[str], bool] | None:
    """For a subject, whether a text a surviving row keeps of the past names them: a step of a
    note's history (a wording corrected in place, "林晓雯交的押金…" → "押金…"), a copy of a note saved
    with a reply when it was recalled. The name as the notes are matched (case ignored); for an
    erasure replayed after a restore (its journal keeps no name) its fingerprints. None for the
    other units (their copies are found by the erased rows' ids)."""
    if unit.kind != "subject":
        return None
    if unit.subject:
        name = normalized(unit.subject)
        return lambda text: name in normalized(text or "")
    prints = Fingerprints.from_json(unit.fingerprints).unshared()
    return (lambda text: prints.matches(text or "") > 0) if prints else None


def as_text(value) -> str:
    """A stored JSON value as the text ``quoting_subject`` reads."""
    return json.dumps(value, ensure_ascii=False, default=str)


def _quoting_rows(unit: Unit, rows, column: str) -> Q:
    """The rows whose ``column`` (JSON: a history, a recall list) names the subject: a filter on
    the name; a replayed erasure reads the rows that hold any (its fingerprints are hashes)."""
    if unit.kind != "subject":
        return Q(pk__in=[])
    if unit.subject:
        return Q(**{f"{column}__icontains": unit.subject})
    quotes = quoting_subject(unit)
    if quotes is None:
        return Q(pk__in=[])
    held = rows.exclude(**{column: []}).values_list("pk", column).iterator(chunk_size=2000)
    return Q(pk__in=[pk for pk, value in held if quotes(as_text(value))])


def surviving_notes_quoting(unit: Unit, plan: Plan):
    """Notes that stay but point at the unit: superseded by an erased note, evolved by one or
    superseding one (a history step names it), reinforced by an erased message, or — for a
    subject — with a history step that names them."""
    notes = sorted(plan.notes)
    rows = Note.objects.filter(firm=unit.firm).exclude(pk__in=notes)
    named_in_history = rows.extra(
        where=["EXISTS (SELECT 1 FROM jsonb_array_elements(CASE jsonb_typeof(memory_note.evolution_history) "
               "WHEN 'array' THEN memory_note.evolution_history ELSE '[]'::jsonb END) AS step "
               "WHERE step->>'triggered_by' = ANY(%s) OR step->>'superseded_by' = ANY(%s) "
               "OR step->>'supersedes' = ANY(%s))"],
        params=[notes, notes, notes],
    )
    return rows.filter(
        Q(superseded_by_id__in=notes) | Q(source_message_ids__overlap=list(plan.messages) or [0])
        | Q(pk__in=named_in_history.values("pk")) | _quoting_rows(unit, rows, "evolution_history")
    )


def messages_recalling(unit: Unit, plan: Plan):
    """Surviving assistant replies whose saved recall list names an erased note or message (as
    an item, or as the other side of an item's contradiction), or — for a subject — whose saved
    copies name them."""
    names = [*plan.notes, *(f"message:{pk}" for pk in plan.messages)]
    rows = Message.objects.filter(firm=unit.firm).exclude(pk__in=plan.messages)
    naming_erased = rows.extra(
        where=["EXISTS (SELECT 1 FROM jsonb_array_elements(CASE jsonb_typeof(memory_message.recalled) "
               "WHEN 'array' THEN memory_message.recalled ELSE '[]'::jsonb END) AS item "
               "WHERE item->>'id' = ANY(%s) OR EXISTS (SELECT 1 FROM jsonb_array_elements("
               "CASE jsonb_typeof(item->'contradictions') WHEN 'array' THEN item->'contradictions' "
               "ELSE '[]'::jsonb END) AS other WHERE other->>'id' = ANY(%s)))"],
        params=[names, names],
    )
    return rows.filter(Q(pk__in=naming_erased.values("pk")) | _quoting_rows(unit, rows, "recalled"))


def consolidated_marks(plan: Plan):
    return ConsolidatedMessage.objects.filter(
        Q(message_id__in=plan.messages) | Q(consolidation_id__in=plan.consolidations)
    )


def erased_texts(unit: Unit, plan: Plan) -> tuple[list[str], list[str]]:
    """The texts the unit's rows hold and the names it goes by (the subject, the matter's title,
    the notes' subjects, the people named in the texts): what the tombstone's fingerprints are
    made of, read before the delete."""
    texts: list[str] = []
    names: list[str] = [unit.subject] if unit.subject else []
    for content, context, subject in Note.objects.filter(pk__in=plan.notes).values_list("content", "context", "subject"):
        texts += [content, context]
        names.append(subject)
    texts += Message.objects.filter(pk__in=plan.messages).values_list("content", flat=True)
    texts += Conversation.objects.filter(
        pk__in=plan.conversations | plan.retitled_conversations).values_list("title", flat=True)
    for title, filename in Document.objects.filter(pk__in=plan.documents).values_list("title", "filename"):
        texts += [title, filename]
    texts += DocumentPage.objects.filter(document_id__in=plan.documents).values_list("text", flat=True)
    if unit.matter is not None:
        texts += [unit.matter.title, unit.matter.description]
        names.append(unit.matter.title)
    names += [name for text in texts for name in proper_names(text or "")]
    return texts, names


def admin_history(unit: Unit, plan: Plan):
    """Django admin history rows that name the unit's objects (``object_repr``, ``change_message``)."""
    named = Q(pk__in=[])
    conversations = plan.conversations | plan.retitled_conversations
    for model, ids in ((Note, plan.notes), (Message, plan.messages), (Conversation, conversations),
                       (Document, plan.documents)):
        if ids:
            named |= Q(content_type=ContentType.objects.get_for_model(model), object_id__in=[str(pk) for pk in ids])
    if unit.matter is not None:
        named |= Q(content_type=ContentType.objects.get_for_model(Matter), object_id=str(unit.matter.pk))
    if unit.subject:
        named |= Q(object_repr__icontains=unit.subject) | Q(change_message__icontains=unit.subject)
    return LogEntry.objects.filter(named)


def shared_fingerprints(unit: Unit, plan: Plan, fingerprints: Fingerprints) -> set[str]:
    """The fingerprints that rows the erasure keeps hold too (any firm: the keyed hashes are the
    installation's): another matter's note with the same sentence, a reply quoting a law, a
    common word taken for a name. ``verify_erasure`` reports them apart from the residue.
    Read after the quoting replies are redacted and before the delete."""
    kept = [
        (Note.objects.exclude(pk__in=list(plan.notes)), ("content", "context", "subject")),
        (Message.objects.exclude(pk__in=plan.messages), ("content",)),
        (Conversation.objects.exclude(pk__in=plan.conversations | plan.retitled_conversations), ("title",)),
        (Document.objects.exclude(pk__in=plan.documents), ("title", "filename")),
        (DocumentPage.objects.exclude(document_id__in=plan.documents), ("text",)),
        (PersonaTrait.objects.exclude(pk__in=plan.traits), ("content",)),
        (PersonaEvidence.objects.exclude(pk__in=plan.evidence), ("content",)),
        (RoutingDecision.objects.exclude(pk__in=plan.decisions), ("content",)),
        (Matter.objects.exclude(pk=unit.matter.pk if unit.matter is not None else None), ("title", "description")),
    ]
    shared: set[str] = set()
    for rows, columns in kept:
        for values in rows.values_list(*columns).iterator(chunk_size=2000):
            for text in values:
                shared |= fingerprints.found_in(text or "")
    if unit.subject:  # the subject's own name is never a shared word: a kept row naming it is residue
        shared.discard(digest(normalized(unit.subject)))
    return shared
