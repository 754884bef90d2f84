"""A document's life: upload (store the file, queue the job), the worker's extraction (status:
queued → extracting → OCR → indexed, or failed: reason), retry.

Nothing is extracted in a request: ``upload_document`` stores the bytes and enqueues
``process_document_task`` on commit; the worker (``manage.py run_worker``) runs it. A failure
leaves the document ``failed`` with its reason and no pages or chunks; ``retry_document`` queues
it again. Once indexed, the note writers registered with ``register_note_writer`` read it into
notes (the write path registers ``remember.documents.remember_document``); a note writer that
fails leaves the document indexed and searchable.
"""
from __future__ import annotations

import io
import logging
from collections.abc import Callable
from functools import partial
from typing import IO

from django.db import transaction
from django_tasks import task

from infra.embeddings import get_embedder
from infra.logs.jobs import job_run
from memory.models import Matter
from documents.models import Document
from documents.services import (
    ExtractedChunk,
    document_beat,
    document_claim,
    document_create,
    document_fail,
    document_requeue,
    document_set_status,
    document_store_extraction,
    file_path,
    store_file,
)
from documents.chunking import chunk_page
from documents.formats import DocumentRejected, Extracted, Page, extract, kind_of
from infra.workers import beating, this_worker

#: Chunks embedded per encoder batch.
DOCUMENT_EMBED_BATCH = 64

logger = logging.getLogger("legalmem.pipeline")

#: What reads an indexed document into notes, in order (``register_note_writer``).
NOTE_WRITERS: list[Callable[[Document], None]] = []


def register_note_writer(writer: Callable[[Document], None]) -> None:
    """``writer(document)`` runs, in its own transaction, on every document the worker indexes
    (the write path registers its reading in ``RememberConfig.ready``; once only)."""
    if writer not in NOTE_WRITERS:
        NOTE_WRITERS.append(writer)

__all__ = ["DocumentRejected", "enqueue_document", "process_document", "restore_document", "retry_document",
           "upload_document"]


def upload_document(*, actor, matter: Matter, stream: IO[bytes], filename: str,
                    parent: Document | None = None, enqueue: bool = True) -> Document:
    """Keep the file (content-addressed), record the document, and queue its extraction.
    Raises UploadTooLarge / EmptyUpload (nothing kept) for a file over the limit or empty."""
    stored = store_file(stream)
    document = document_create(actor=actor, matter=matter, stored=stored, filename=filename, parent=parent)
    if enqueue:
        enqueue_document(document)
    return document


def enqueue_document(document: Document) -> None:
    """The worker extracts it once the current transaction commits."""
    transaction.on_commit(partial(_enqueue, document.pk))


def _enqueue(document_id: int) -> None:
    try:
        process_document_task.enqueue(document_id)
    except Exception:  # the queue is down: the document stays queued; retry re-enqueues it
        logger.exception("could not enqueue document %s", document_id)


def restore_document(*, actor, matter: Matter, content: bytes, filename: str, kind: str,
                     pages: list[tuple[str, bool]], headers: dict | None = None,
                     parent: Document | None = None) -> Document:
    """An exported document brought back into ``matter`` (``import_matter`` of a bundle): the file
    kept as on upload, its pages as exported, chunks, keyword terms and embeddings made here with
    this installation's model. No notes: the matter's notes come with the export (those made
    from this document point to it). Runs in the caller's transaction; the file, written to the
    store first, is the caller's to forget if that transaction rolls back."""
    stored = store_file(io.BytesIO(content))
    document = document_create(actor=actor, matter=matter, stored=stored, filename=filename, kind=kind,
                               parent=parent, headers=headers)
    extracted = Extracted([Page(text, by_ocr) for text, by_ocr in pages], headers=headers or {})
    chunks = list(_chunks(extracted))
    _embed(chunks)
    document_store_extraction(document, pages=pages, chunks=chunks, embedding_model=get_embedder().name,
                              headers=headers)
    return document


def retry_document(document: Document, *, actor) -> Document:
    """A failed document goes back to the worker."""
    document_requeue(document, actor=actor)
    enqueue_document(document)
    return document


@task()
def process_document_task(document_id: int) -> dict:
    with job_run("document", document_id=document_id):
        return {"status": process_document(document_id)}


def process_document(document_id: int) -> str:
    """Extract, chunk, embed and index one document; returns its final status."""
    host, pid = this_worker()
    document = document_claim(document_id, host=host, pid=pid)
    if document is None:
        current = Document.objects.filter(pk=document_id).values_list("status", flat=True).first()
        return current or "gone"
    with beating(f"document-{document_id}-heartbeat",
                 lambda at: document_beat(document_id, host=host, pid=pid, at=at)):
        return _read(document)


def _read(document: Document) -> str:
    """Extract, chunk, embed, store and remember ``document`` (claimed); its final status."""
    path = file_path(document.sha256)
    try:
        if not path.exists():
            raise DocumentRejected("the stored file is missing from the data folder")
        with path.open("rb") as handle:
            head = handle.read(16)
        kind = kind_of(document.filename, head)
        document_set_status(document, Document.Status.EXTRACTING, kind=kind)
        extracted = extract(path, kind, on_ocr=lambda: document_set_status(document, Document.Status.OCR))
        chunks = list(_chunks(extracted))
        _embed(chunks)
        document_store_extraction(document, pages=[(p.text, p.by_ocr) for p in extracted.pages],
                                  chunks=chunks, embedding_model=get_embedder().name, headers=extracted.headers)
        _attach(document, extracted)
        _remember(document)
        return Document.Status.INDEXED
    except DocumentRejected as error:
        document_fail(document, str(error))
    except Exception as error:  # a bug or an outage: failed with the reason, retryable
        logger.exception("document %s failed", document.pk)
        document_fail(document, f"internal error: {type(error).__name__}: {error}")
    return Document.Status.FAILED


def _remember(document: Document) -> None:
    """Notes from the chunks (the document stays indexed and searchable if a writer fails)."""
    for writer in NOTE_WRITERS:
        try:
            with transaction.atomic():
                writer(document)
        except Exception:
            logger.exception("notes from document %s failed", document.pk)


def _chunks(extracted: Extracted):
    heading = ""
    for number, page in enumerate(extracted.pages, start=1):
        spans, heading = chunk_page(page.text, heading)
        for span in spans:
            yield ExtractedChunk(number, span.start, span.end, span.heading, page.text[span.start:span.end], None)


def _embed(chunks: list[ExtractedChunk]) -> None:
    embedder = get_embedder()
    for offset in range(0, len(chunks), DOCUMENT_EMBED_BATCH):
        batch = chunks[offset:offset + DOCUMENT_EMBED_BATCH]
        vectors = embedder.embed_passages([(c.heading + "\n" + c.text).strip() for c in batch])
        for index, vector in enumerate(vectors):
            chunks[offset + index] = ExtractedChunk(**{**batch[index].__dict__, "embedding": list(map(float, vector))})


def _attach(document: Document, extracted: Extracted, *, enqueue: bool = True) -> None:
    """An e-mail's attachments become documents of their own, attached to it."""
    for attachment in extracted.attachments:
        if attachment.content and not document.attachments.filter(filename=attachment.filename[:255]).exists():
            upload_document(actor="system:documents", matter=document.matter, stream=io.BytesIO(attachment.content),
                            filename=attachment.filename, parent=document, enqueue=enqueue)
