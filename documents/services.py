"""Writing a matter's documents: the content-addressed file store, the document rows, their
extracted pages and chunks, status and retry — each change in one transaction, the important
ones audited (docs/documents.md).

The store: ``<data folder>/documents/<first two hex digits>/<sha256>``. The same bytes uploaded
twice are one file and two ``Document`` rows; a file is removed only when no row refers to its
hash any more (``forget_unreferenced_files``, run after an erasure commits; the erasure itself is
``records.services.erasure``'s).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterable

from django.conf import settings
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from legaltext.documents import document_title, named_like_a_file

from infra.locks import release_if_frozen
from memory.models import AuditEvent, Matter, Message
from documents.models import Document, DocumentChunk, DocumentPage
from memory.segmentation import search_text
from memory.services.audit import record

READ_BLOCK_BYTES = 1024 * 1024
DOCUMENT_ERROR_CHARS = 500


class UploadTooLarge(ValueError):
    """The file is larger than DOCUMENT_MAX_UPLOAD_MB (a 413 on the web)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the file is larger than the limit of {limit // (1024 * 1024)} MB")
        self.limit = limit


class EmptyUpload(ValueError):
    """A file of zero bytes."""


@dataclass(frozen=True)
class StoredFile:
    sha256: str
    size_bytes: int


def store_root() -> Path:
    return Path(settings.DOCUMENT_STORE_DIR)


def file_path(sha256: str) -> Path:
    """Where the bytes of this hash live."""
    if len(sha256) != 64 or any(c not in "0123456789abcdef" for c in sha256):
        raise ValueError(f"not a SHA-256 hex digest: {sha256!r}")
    return store_root() / sha256[:2] / sha256


def store_file(stream: IO[bytes], *, limit: int | None = None) -> StoredFile:
    """Copy the stream into the store under its hash (once: the same bytes again keep the first
    copy). Larger than ``limit`` (default DOCUMENT_MAX_UPLOAD_BYTES) raises UploadTooLarge and
    leaves nothing behind."""
    limit = settings.DOCUMENT_MAX_UPLOAD_BYTES if limit is None else limit
    root = store_root()
    root.mkdir(parents=True, exist_ok=True)
    digest, size = hashlib.sha256(), 0
    handle, temporary = tempfile.mkstemp(dir=root, prefix=".incoming-")
    try:
        with os.fdopen(handle, "wb") as out:
            while block := stream.read(READ_BLOCK_BYTES):
                size += len(block)
                if size > limit:
                    raise UploadTooLarge(limit)
                digest.update(block)
                out.write(block)
            out.flush()
            os.fsync(out.fileno())
        if size == 0:
            raise EmptyUpload("the file is empty")
        target = file_path(digest.hexdigest())
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            os.unlink(temporary)
        else:
            os.replace(temporary, target)
        return StoredFile(digest.hexdigest(), size)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise


def document_create(*, actor, matter: Matter, stored: StoredFile, filename: str, kind: str = "",
                    parent: Document | None = None, headers: dict | None = None) -> Document:
    """A new document of the matter for a stored file, queued for extraction, audited."""
    title = Path(filename).stem.strip() or filename
    with transaction.atomic():
        document = Document.objects.create(
            firm_id=matter.firm_id, matter=matter, uploaded_by=None if isinstance(actor, str) else actor,
            parent=parent, filename=filename[:255], title=title[:255], kind=kind, sha256=stored.sha256,
            size_bytes=stored.size_bytes, headers=headers or {},
        )
        record(actor=actor, event=AuditEvent.DOCUMENT_UPLOADED, firm_id=matter.firm_id, matter_id=matter.pk,
               object_type="document", object_id=document.pk,
               after={"filename": document.filename, "sha256": stored.sha256, "size_bytes": stored.size_bytes,
                      "parent": parent.pk if parent else None})
    return document


def document_claim(document_id: int, *, host: str = "", pid: int | None = None) -> Document | None:
    """Take a queued document for extraction (queued → extracting, one more attempt, this worker
    as its holder); None when it is not queued (another worker has it, it is done, or it is gone)."""
    now = timezone.now()
    with transaction.atomic():
        claimed = Document.objects.filter(pk=document_id, status=Document.Status.QUEUED).update(
            status=Document.Status.EXTRACTING, attempts=F("attempts") + 1,
            started_at=now, heartbeat_at=now, worker_host=host, worker_pid=pid)
    return Document.objects.filter(pk=document_id).first() if claimed else None


def document_beat(document_id: int, *, host: str, pid: int | None, at) -> int:
    """The heartbeat of a document this worker is reading; returns 1 when it beat. A worker
    frozen in mid-beat loses its session, not the row (``release_if_frozen``)."""
    with transaction.atomic(savepoint=False):
        release_if_frozen()
        return Document.objects.filter(
            pk=document_id, status__in=(Document.Status.EXTRACTING, Document.Status.OCR),
            worker_host=host, worker_pid=pid,
        ).update(heartbeat_at=at)


def document_resume(document: Document, *, gone_since) -> bool:
    """A document whose worker stopped while reading it goes back to the queue (the caller
    enqueues its job); audited. False when it is no longer held by that worker (it finished,
    failed, or another watchdog took it first). ``gone_since``: its last heartbeat or start."""
    with transaction.atomic():
        updated = Document.objects.filter(
            pk=document.pk, status__in=(Document.Status.EXTRACTING, Document.Status.OCR),
            worker_host=document.worker_host, worker_pid=document.worker_pid, started_at=document.started_at,
        ).update(status=Document.Status.QUEUED, worker_host="", worker_pid=None, heartbeat_at=None)
        if not updated:
            return False
        record(actor="system:documents", event=AuditEvent.DOCUMENT_RESUMED, firm_id=document.firm_id,
               matter_id=document.matter_id, object_type="document", object_id=document.pk,
               before={"worker": f"{document.worker_host}:{document.worker_pid}",
                       "last_sign_of_life": gone_since.isoformat() if gone_since else None},
               after={"attempts": document.attempts})
    document.status = Document.Status.QUEUED
    return True


def document_set_status(document: Document, status: str, *, kind: str | None = None) -> None:
    """Say how far extraction got (queued → extracting → OCR → indexed / failed)."""
    fields = {"status": status}
    if kind is not None:
        fields["kind"] = kind
        document.kind = kind
    with transaction.atomic():
        Document.objects.filter(pk=document.pk).update(**fields)
    document.status = status


def document_fail(document: Document, reason: str) -> None:
    """Failed, with the reason, and nothing half-written: its pages and chunks are removed."""
    reason = reason[:DOCUMENT_ERROR_CHARS]
    with transaction.atomic():
        DocumentChunk.objects.filter(document=document).delete()
        DocumentPage.objects.filter(document=document).delete()
        Document.objects.filter(pk=document.pk).update(status=Document.Status.FAILED, error=reason,
                                                       page_count=0, ocr_pages=0)
        record(actor="system:documents", event=AuditEvent.DOCUMENT_FAILED, firm_id=document.firm_id,
               matter_id=document.matter_id, object_type="document", object_id=document.pk,
               after={"error": reason})
    document.status, document.error = Document.Status.FAILED, reason


def document_requeue(document: Document, *, actor) -> Document:
    """A failed document goes back to the queue (the caller enqueues its job)."""
    with transaction.atomic():
        updated = Document.objects.filter(pk=document.pk, status=Document.Status.FAILED).update(
            status=Document.Status.QUEUED, error="")
        if not updated:
            raise ValueError("only a failed document can be retried")
        record(actor=actor, event=AuditEvent.DOCUMENT_UPLOADED, firm_id=document.firm_id,
               matter_id=document.matter_id, object_type="document", object_id=document.pk,
               after={"retry": True})
    document.status, document.error = Document.Status.QUEUED, ""
    return document


@dataclass(frozen=True)
class ExtractedChunk:
    page_number: int
    start: int
    end: int
    heading: str
    text: str
    embedding: list[float] | None


def document_store_extraction(document: Document, *, pages: list[tuple[str, bool]],
                              chunks: Iterable[ExtractedChunk], embedding_model: str,
                              headers: dict | None = None) -> int:
    """Replace the document's pages and chunks with these, mark it indexed; one transaction.
    A title that is a file name made by a machine ("lease_scan") becomes the first page's title
    line when it has one ("房屋租赁合同"): what a citation names."""
    with transaction.atomic():
        DocumentChunk.objects.filter(document=document).delete()
        DocumentPage.objects.filter(document=document).delete()
        stored_pages = DocumentPage.objects.bulk_create(
            DocumentPage(document=document, number=number, text=text, by_ocr=by_ocr)
            for number, (text, by_ocr) in enumerate(pages, start=1)
        )
        page_of = {page.number: page for page in stored_pages}
        rows = [
            DocumentChunk(
                document=document, page=page_of[chunk.page_number], matter_id=document.matter_id,
                ordinal=ordinal, start=chunk.start, end=chunk.end, heading=chunk.heading[:300],
                text=chunk.text, search_text=search_text(chunk.heading + "\n" + chunk.text),
                embedding=chunk.embedding, embedding_model=embedding_model if chunk.embedding is not None else "",
            )
            for ordinal, chunk in enumerate(chunks)
        ]
        DocumentChunk.objects.bulk_create(rows, batch_size=500)
        title = document.title
        if pages and named_like_a_file(title):
            title = document_title(pages[0][0]) or title
        Document.objects.filter(pk=document.pk).update(
            status=Document.Status.INDEXED, error="", page_count=len(pages), headers=headers or {},
            ocr_pages=sum(1 for _, by_ocr in pages if by_ocr), indexed_at=timezone.now(), title=title[:255])
        record(actor="system:documents", event=AuditEvent.DOCUMENT_INDEXED, firm_id=document.firm_id,
               matter_id=document.matter_id, object_type="document", object_id=document.pk,
               after={"pages": len(pages), "chunks": len(rows), "title": title[:255]})
    document.status = Document.Status.INDEXED
    document.title = title[:255]
    return len(rows)


def document_access_record(document: Document, *, actor, downloaded: bool, page: int | None = None) -> None:
    """Audit that someone opened the viewer or took the file."""
    with transaction.atomic():
        record(actor=actor, event=AuditEvent.DOCUMENT_DOWNLOADED if downloaded else AuditEvent.DOCUMENT_VIEWED,
               firm_id=document.firm_id, matter_id=document.matter_id, object_type="document",
               object_id=document.pk, after={"page": page} if page else None)


def documents_erase(documents) -> tuple[int, set[str]]:
    """Delete these documents with their pages and chunks (inside the caller's transaction);
    returns how many and the hashes whose files may now be unreferenced."""
    hashes = set(documents.values_list("sha256", flat=True))
    DocumentChunk.objects.filter(document__in=documents).delete()
    DocumentPage.objects.filter(document__in=documents).delete()
    ids = list(documents.values_list("pk", flat=True))
    Document.objects.filter(parent_id__in=ids).update(parent=None)
    count, _ = Document.objects.filter(pk__in=ids).delete()
    return len(ids), hashes


def forget_unreferenced_files(hashes: Iterable[str]) -> int:
    """Remove the stored files no document refers to any more; returns how many went."""
    removed = 0
    for sha in hashes:
        if not Document.objects.filter(sha256=sha).exists():
            path = file_path(sha)
            if path.exists():
                path.unlink()
                removed += 1
    return removed


def scrub_recalled_passages(document_ids: list[int]) -> int:
    """Chat replies keep the passages recalled for them (``Message.recalled``): those of erased
    documents are removed from every reply, in whatever conversation."""
    scrubbed = 0
    for document_id in document_ids:
        for reply in Message.objects.filter(recalled__contains=[{"document_id": document_id}]).only("id", "recalled"):
            kept = [entry for entry in reply.recalled
                    if not (isinstance(entry, dict) and entry.get("document_id") == document_id)]
            Message.objects.filter(pk=reply.pk).update(recalled=kept)
            scrubbed += 1
    return scrubbed
