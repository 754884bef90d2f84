"""A matter's memory as a document (docs/records.md, "Export"): read-only.

``matter_document`` is the JSON export (format ``legalmem-matter``, version 1): the matter, its
walled notes with provenance, validity windows and evolution history, the links between them,
their source messages (grouped by conversation), its documents (file name, SHA-256, uploader,
status and each page's extracted text; not the files' bytes) and the audit history of the matter
and its notes. ``records.services.matter_transfer.import_matter`` reads it back. ``markdown_report``
renders the same document for people. Profile notes are never exported (they are their
owner's alone); raw conversations are exported only as far as they are a note's source.
"""
from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils import timezone

from memory.models import AuditLog, Firm, Matter, MemoryScope, Message, Note, NoteLink
from documents.models import Document

FORMAT = "legalmem-matter"
VERSION = 1


def _iso(value) -> str | None:
    return value.isoformat() if value else None


def message_ref(pk: int) -> str:
    return f"message:{pk}"


def conversation_ref(pk: int) -> str:
    return f"conversation:{pk}"


def exported_notes(matter: Matter):
    return (Note.objects.filter(matter=matter).exclude(memory_scope=MemoryScope.USER_PROFILE)
            .select_related("owner").order_by("stored_at", "pk"))


def _note(note: Note) -> dict[str, Any]:
    return {
        "ref": str(note.pk),
        "content": note.content,
        "memory_scope": note.memory_scope,
        "category": note.category,
        "memory_type": note.memory_type,
        "keywords": list(note.keywords),
        "tags": list(note.tags),
        "context": note.context,
        "importance": note.importance,
        "confidence": note.confidence,
        "mention_count": note.mention_count,
        "owner": note.owner.get_username() if note.owner else None,
        "subject": note.subject,
        "source_type": note.source_type,
        "source_id": note.source_id,
        "conversation": conversation_ref(note.conversation_id) if note.conversation_id else None,
        "source_messages": [message_ref(pk) for pk in note.source_message_ids],
        "speaker": note.speaker,
        "said_at": _iso(note.said_at),
        "stored_at": _iso(note.stored_at),
        "status": note.status,
        "valid_from": _iso(note.valid_from),
        "valid_to": _iso(note.valid_to),
        "superseded_by": str(note.superseded_by_id) if note.superseded_by_id else None,
        "evolution_history": note.evolution_history,
    }


def _conversations(matter: Matter, notes: list[Note], viewer) -> list[dict[str, Any]]:
    """The notes' source messages. Raw conversations are their owner's (and firm admins'): a
    lawyer's export carries the text of their own conversations only; notes still name the others."""
    message_ids = {pk for note in notes for pk in note.source_message_ids}
    messages = (Message.objects.filter(pk__in=message_ids).select_related("conversation__user")
                .order_by("conversation_id", "said_at", "pk"))
    if viewer is not None and not Firm.objects.administered_by(viewer).filter(pk=matter.firm_id).exists():
        messages = messages.filter(conversation__user=viewer)
    grouped: dict[int, dict[str, Any]] = {}
    for message in messages:
        conversation = message.conversation
        entry = grouped.setdefault(conversation.pk, {
            "ref": conversation_ref(conversation.pk),
            "title": conversation.title,
            "user": conversation.user.get_username(),
            "external_id": conversation.external_id,
            "messages": [],
        })
        entry["messages"].append({
            "ref": message_ref(message.pk), "role": message.role, "speaker": message.speaker,
            "content": message.content, "status": message.status, "said_at": _iso(message.said_at),
        })
    return list(grouped.values())


def document_ref(pk: int) -> str:
    return f"document:{pk}"


def _documents(matter: Matter) -> list[dict[str, Any]]:
    """The matter's documents with their pages' extracted text. The original file is named by its
    SHA-256 (the store and a backup hold it under that hash), not embedded."""
    documents = (Document.objects.filter(matter=matter).select_related("uploaded_by")
                 .prefetch_related("pages").order_by("uploaded_at", "pk"))
    return [{
        "ref": document_ref(document.pk),
        "title": document.title,
        "filename": document.filename,
        "kind": document.kind,
        "sha256": document.sha256,
        "size_bytes": document.size_bytes,
        "uploaded_by": document.uploaded_by.get_username() if document.uploaded_by else None,
        "uploaded_at": _iso(document.uploaded_at),
        "status": document.status,
        "error": document.error,
        "page_count": document.page_count,
        "indexed_at": _iso(document.indexed_at),
        "attached_to": document_ref(document.parent_id) if document.parent_id else None,
        "headers": document.headers,
        "pages": [{"number": page.number, "by_ocr": page.by_ocr, "text": page.text} for page in document.pages.all()],
    } for document in documents]


def _history(matter: Matter, note_ids: list[str]) -> list[dict[str, Any]]:
    entries = AuditLog.objects.filter(
        Q(matter=matter) | Q(object_type="note", object_id__in=note_ids) | Q(object_type="matter", object_id=str(matter.pk))
    ).filter(private_to__isnull=True).order_by("created_at", "id")
    return [{"at": _iso(e.created_at), "actor": e.actor_label, "event": e.event_type, "object_type": e.object_type,
             "object_id": e.object_id, "before": e.before, "after": e.after, "extra": e.extra} for e in entries]


def matter_document(matter: Matter, viewer=None) -> dict[str, Any]:
    """The JSON export of a matter ``viewer`` has already been allowed to see (None: an
    operator's command, which sees everything)."""
    notes = list(exported_notes(matter))
    ids = [str(note.pk) for note in notes]
    links = NoteLink.objects.filter(source_id__in=ids, target_id__in=ids).order_by("created_at", "pk")
    return {
        "format": FORMAT,
        "version": VERSION,
        "exported_at": _iso(timezone.now()),
        "firm": {"slug": matter.firm.slug, "name": matter.firm.name},
        "matter": {
            "reference": matter.reference, "title": matter.title, "description": matter.description,
            "status": matter.status, "closed_at": _iso(matter.closed_at), "created_at": _iso(matter.created_at),
        },
        "notes": [_note(note) for note in notes],
        "links": [{"source": str(link.source_id), "target": str(link.target_id), "link_type": link.link_type,
                   "weight": link.weight, "reason": link.reason} for link in links],
        "conversations": _conversations(matter, notes, viewer),
        "documents": _documents(matter),
        "history": _history(matter, ids),
    }


def _md(text: str) -> str:
    """One line of Markdown text (no stray headings or tables from what was said)."""
    return " ".join(str(text or "").split()).replace("|", "\\|")


def markdown_report(document: dict[str, Any]) -> str:
    """The same export for people: the matter, its current and past facts, their sources."""
    matter = document["matter"]
    messages = {m["ref"]: m for c in document["conversations"] for m in c["messages"]}
    lines = [
        f"# {_md(matter['reference'])} {_md(matter['title'])}".rstrip(),
        "",
        f"- Firm: {_md(document['firm']['name'])}",
        f"- Status: {matter['status']}" + (f" (closed {matter['closed_at'][:10]})" if matter["closed_at"] else ""),
        f"- Exported: {document['exported_at']}",
        f"- Notes: {len(document['notes'])}, links: {len(document['links'])}, "
        f"source messages: {len(messages)}, documents: {len(document.get('documents', []))}, "
        f"history entries: {len(document['history'])}",
        "",
    ]
    if matter["description"]:
        lines += [_md(matter["description"]), ""]
    for title, status in (("Current notes", Note.Status.ACTIVE), ("Superseded notes", Note.Status.SUPERSEDED)):
        notes = [n for n in document["notes"] if n["status"] == status]
        if not notes:
            continue
        lines += [f"## {title}", ""]
        for note in notes:
            window = f"valid {note['valid_from'][:10] if note['valid_from'] else '?'} → " \
                     f"{note['valid_to'][:10] if note['valid_to'] else 'now'}"
            lines.append(f"- **{_md(note['content'])}**  ")
            lines.append(f"  {note['category']} · {note['memory_scope']} · {window} · "
                         f"said by {_md(note['speaker']) or '?'} on {(note['said_at'] or '?')[:10]} · "
                         f"source {note['source_type']} {_md(note['source_id'])}")
            for ref in note["source_messages"]:
                if ref in messages:
                    lines.append(f"  > {_md(messages[ref]['speaker'])}: {_md(messages[ref]['content'])}")
        lines.append("")
    documents = document.get("documents", [])
    if documents:
        lines += ["## Documents", ""]
        for item in documents:
            lines.append(f"### {_md(item['title'])}")
            lines.append("")
            lines.append(f"- File: {_md(item['filename'])} (SHA-256 {item['sha256']}), {item['status']}, "
                         f"{item['page_count']} pages, uploaded by {_md(item['uploaded_by']) or '?'} "
                         f"on {(item['uploaded_at'] or '?')[:10]}")
            lines.append("")
            for page in item["pages"]:
                lines += [f"Page {page['number']}:", ""]
                lines += [f"> {_md(line)}" for line in page["text"].splitlines() if line.strip()] or ["> "]
                lines.append("")
    if document["history"]:
        lines += ["## History", ""]
        lines += [f"- {e['at'][:19]} {_md(e['actor'])} {e['event']} {e['object_type']}:{e['object_id']}"
                  for e in document["history"]]
        lines.append("")
    return "\n".join(lines)
