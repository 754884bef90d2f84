"""Handing a matter's memory over: an audited export, and the import of an export into a firm
(docs/records.md, "Export and the round trip")."""
from __future__ import annotations

import io
import json
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from records.export import FORMAT, VERSION, markdown_report, matter_document
from memory.models import AuditEvent, Conversation, Firm, Matter, Membership, Note, SourceType
from documents.models import Document
from documents.services import forget_unreferenced_files
from memory.services.conversations import save_message
from memory.services.audit import record
from memory.services.notes import NoteDraft, NoteValidationError, create_note, link_notes
from records.services.matter_bundle import BundleError, BundleFiles
from documents.ingest import restore_document, upload_document

FORMATS = ("json", "markdown")


class TransferError(ValueError):
    """The export cannot be made or read back (unknown format, wrong file, clashing reference);
    the message is in the active language, as the commands and the API show it."""


def exportable_matter(user, matter_id: int) -> Matter:
    """The matter if ``user`` may export it (assigned to it, in one of their firms); otherwise
    ``Matter.DoesNotExist`` — the caller answers 404 whether it exists or not."""
    return Matter.objects.assigned_to(user).select_related("firm").get(pk=matter_id, erased_at__isnull=True)


def export_matter(matter: Matter, *, actor, fmt: str = "json") -> tuple[str, str, str]:
    """(file name, content type, text) of the export, recorded in the audit log."""
    if fmt not in FORMATS:
        raise TransferError(gettext("unknown export format %(format)r; expected one of %(formats)s") % {
            "format": fmt, "formats": ", ".join(FORMATS)})
    document = matter_document(matter, viewer=None if isinstance(actor, str) else actor)
    record(actor=actor, event=AuditEvent.MATTER_EXPORTED, firm=matter.firm, object_type="matter",
           object_id=matter.pk, matter_id=matter.pk, after={"format": fmt, "notes": len(document["notes"])})
    name = f"matter-{matter.reference or matter.pk}"
    if fmt == "json":
        return f"{name}.json", "application/json", json.dumps(document, ensure_ascii=False, indent=2)
    return f"{name}.md", "text/markdown; charset=utf-8", markdown_report(document)


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def _check(document: Any) -> None:
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise TransferError(gettext('not a LegalMem matter export (expected "format": "%(format)s")') % {
            "format": FORMAT})
    if document.get("version") != VERSION:
        raise TransferError(gettext("export version %(version)r is not supported (this is version %(supported)s)") % {
            "version": document.get("version"), "supported": VERSION})
    for key in ("matter", "notes", "links", "conversations"):
        if key not in document:
            raise TransferError(gettext("the export has no %(key)r") % {"key": key})


def import_matter(document: dict, *, firm: Firm, actor, fallback_user, reference: str | None = None,
                  files: BundleFiles | None = None) -> Matter:
    """Recreate an exported matter in ``firm`` in one transaction: a new matter, the source
    messages, the documents when ``files`` (a bundle's) hold them, the notes (re-embedded, with
    status, validity windows and history as exported) and their links. Users are matched by
    username among the firm's members; anyone else's conversations and notes go to
    ``fallback_user``. Everything is audited as new rows. Without ``files`` the documents are
    not re-created, and a note made from one keeps its citation but no link to it."""
    _check(document)
    if files is not None:
        missing = [item["filename"] for item in document.get("documents", []) if item["sha256"] not in files]
        if missing:
            raise TransferError(gettext("the bundle lacks the file of %(count)s document(s), e.g. %(filename)r") % {
                "count": len(missing), "filename": missing[0]})
    if not Membership.objects.filter(firm=firm, user=fallback_user).exists():
        raise TransferError(gettext("%(user)s is not a member of %(firm)s") % {
            "user": fallback_user.get_username(), "firm": firm.slug})
    source = document["matter"]
    reference = source["reference"] if reference is None else reference
    if reference and Matter.objects.filter(firm=firm, reference=reference).exists():
        raise TransferError(gettext("firm %(firm)s already has a matter %(reference)r; give another with --reference") % {
            "firm": firm.slug, "reference": reference})
    members = {u.get_username(): u for u in get_user_model().objects.filter(memberships__firm=firm)}

    def user_named(name: str | None):
        return members.get(name or "", fallback_user)

    stored: list[str] = []
    try:
        with transaction.atomic():
            matter = Matter.objects.create(firm=firm, title=source["title"], reference=reference,
                                           description=source.get("description", ""))
            record(actor=actor, event=AuditEvent.MATTER_IMPORTED, firm=firm, object_type="matter",
                   object_id=matter.pk, matter_id=matter.pk,
                   after={"reference": reference, "from_firm": document.get("firm", {}).get("slug"),
                          "notes": len(document["notes"])})
            conversations, messages = _messages(document, firm, matter, user_named)
            documents = _documents(document, matter, files, actor, stored) if files is not None else {}
            notes = _notes(document, firm, matter, conversations, messages, user_named, actor, documents)
            for link in document["links"]:
                if link["source"] in notes and link["target"] in notes:
                    link_notes(notes[link["source"]], notes[link["target"]], link_type=link["link_type"],
                               weight=float(link["weight"]), actor=actor, reason=link.get("reason", ""))
    except (KeyError, TypeError, ValueError) as exc:
        forget_unreferenced_files(stored)  # the rows are rolled back: the files they named go too
        if isinstance(exc, TransferError):
            raise
        if isinstance(exc, BundleError):
            raise TransferError(str(exc)) from None
        raise TransferError(gettext("the export is malformed: %(error)s") % {
            "error": f"{type(exc).__name__}: {exc}"}) from exc
    except BaseException:
        forget_unreferenced_files(stored)
        raise
    return matter


def _documents(document, matter, files: BundleFiles, actor, stored: list[str]) -> dict[str, int]:
    """The bundle's documents in ``matter``: an indexed one with its pages as exported (chunks
    and embeddings made here), any other queued for the worker; exported ref → new id."""
    created: dict[str, Document] = {}
    for item in document.get("documents", []):
        content = files.read(item["sha256"])
        stored.append(item["sha256"])
        parent = created.get(item.get("attached_to") or "")
        pages = [(page["text"], bool(page.get("by_ocr"))) for page in item.get("pages", [])]
        if item.get("status") == Document.Status.INDEXED and pages:
            created[item["ref"]] = restore_document(
                actor=actor, matter=matter, content=content, filename=item["filename"], kind=item.get("kind", ""),
                pages=pages, headers=item.get("headers") or {}, parent=parent)
        else:  # failed or never read where it came from: read again here
            created[item["ref"]] = upload_document(actor=actor, matter=matter, stream=io.BytesIO(content),
                                                   filename=item["filename"], parent=parent)
    return {ref: new.pk for ref, new in created.items()}


def _source_id(item: dict, documents: dict[str, int]) -> str:
    """A document-made note's provenance pointed at the document's new copy ("" when the
    document did not come along: its citation stays in the note's speaker)."""
    source_id = item["source_id"]
    if item["source_type"] != SourceType.DOCUMENT or not source_id.startswith("document:"):
        return source_id
    _kind, old_id, rest = source_id.split(":", 2)
    new_id = documents.get(f"document:{old_id}")
    return f"document:{new_id}:{rest}" if new_id is not None else ""


def _messages(document, firm, matter, user_named) -> tuple[dict[str, Conversation], dict[str, int]]:
    conversations: dict[str, Conversation] = {}
    messages: dict[str, int] = {}
    for exported in document["conversations"]:
        conversation = Conversation.objects.create(
            firm=firm, user=user_named(exported.get("user")), matter=matter, title=exported.get("title", ""),
        )
        conversations[exported["ref"]] = conversation
        for item in exported["messages"]:
            message = save_message(conversation, item["role"], item["content"], speaker=item.get("speaker", ""),
                                   said_at=_when(item.get("said_at")), status=item.get("status", "complete"),
                                   external_id=item["ref"])
            messages[item["ref"]] = message.pk
    return conversations, messages


def _notes(document, firm, matter, conversations, messages, user_named, actor,
           documents: dict[str, int]) -> dict[str, Note]:
    notes: dict[str, Note] = {}
    for item in document["notes"]:
        owner = user_named(item["owner"]) if item.get("owner") else None
        draft = NoteDraft(
            firm=firm, content=item["content"], memory_scope=item["memory_scope"], category=item["category"],
            source_type=item["source_type"], memory_type=item["memory_type"], keywords=item["keywords"],
            tags=item["tags"], context=item["context"], importance=item["importance"],
            confidence=item["confidence"], matter=matter, owner=owner,
            conversation=conversations.get(item.get("conversation") or ""), subject=item["subject"],
            source_id=_source_id(item, documents), speaker=item["speaker"], said_at=_when(item["said_at"]),
            source_message_ids=[messages[ref] for ref in item["source_messages"] if ref in messages],
        )
        try:
            notes[item["ref"]] = create_note(draft, actor=actor)
        except NoteValidationError as exc:
            raise TransferError(gettext("note %(ref)s: %(error)s") % {"ref": item["ref"], "error": exc}) from exc
    for item in document["notes"]:
        # What the note went through stays as exported: status, validity window, history.
        Note.objects.filter(pk=notes[item["ref"]].pk).update(
            status=item["status"], valid_from=_when(item["valid_from"]), valid_to=_when(item["valid_to"]),
            superseded_by=notes.get(item.get("superseded_by") or ""), mention_count=item["mention_count"],
            evolution_history=item["evolution_history"],
            # Brought in now: one that arrives superseded (or forgotten) left this memory's current
            # view the moment it entered it.
            retired_at=None if item["status"] == Note.Status.ACTIVE else timezone.now(),
        )
    return notes
