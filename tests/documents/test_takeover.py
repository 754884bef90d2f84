"""A document whose worker stopped while reading it (killed, out of memory) is taken over by a
live worker's watchdog: queued again and read to the end; one that stopped its worker three
times is failed with that reason instead of taking every worker down in turn; a worker that
still beats keeps its document however long it reads (docs/documents.md, "When a worker stops")."""
from __future__ import annotations

import io
import socket
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import timezone, translation

from documents.reasons import reason_label
from memory.models import AuditEvent, AuditLog
from documents.models import Document
from documents.services import document_claim
from infra import workers
from documents.ingest import process_document, retry_document, upload_document
from documents.takeover import DOCUMENT_MAX_ATTEMPTS, resume_stalled_documents
from tests.documents.files import scanned_pdf, text_pdf

HOST = socket.gethostname()[:255]
LEASE = [["Lease Agreement", "The monthly rent is RMB 8000, payable before the 5th day of each month."]]


def dead_pid() -> int:
    """A pid no process on this host can have (one above the kernel's largest)."""
    return int(Path("/proc/sys/kernel/pid_max").read_text()) + 1


def uploaded(world, content: bytes = b"", filename: str = "lease.pdf") -> Document:
    return upload_document(actor=world.alice, matter=world.matter_deposit, filename=filename, enqueue=False,
                           stream=io.BytesIO(content or text_pdf(LEASE)))


def claimed(document: Document, *, host: str = HOST, pid: int, heartbeat_age: float = 0.0,
            started_age: float = 0.0) -> Document:
    """``document`` claimed by ``host``/``pid``, begun and last beating that many seconds ago."""
    assert document_claim(document.pk, host=host, pid=pid) is not None
    now = timezone.now()
    Document.objects.filter(pk=document.pk).update(started_at=now - timedelta(seconds=started_age),
                                                   heartbeat_at=now - timedelta(seconds=heartbeat_age))
    document.refresh_from_db()
    return document


@pytest.mark.django_db
def test_a_document_left_by_a_killed_worker_is_queued_again_and_read_to_the_end(
        world, django_capture_on_commit_callbacks):
    document = claimed(uploaded(world), pid=dead_pid())
    assert document.status == Document.Status.EXTRACTING

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        assert resume_stalled_documents() == [document.pk]
    assert callbacks, "its job is enqueued again"
    document.refresh_from_db()
    assert (document.status, document.worker_pid, document.attempts) == (Document.Status.QUEUED, None, 1)
    entry = AuditLog.objects.get(event_type=AuditEvent.DOCUMENT_RESUMED, object_id=str(document.pk))
    assert entry.before["worker"].startswith(f"{HOST}:")
    assert entry.matter_id == world.matter_deposit.pk and entry.after == {"attempts": 1}
    assert resume_stalled_documents() == []  # queued now: nothing left to take over

    assert process_document(document.pk) == Document.Status.INDEXED
    document.refresh_from_db()
    assert (document.status, document.page_count, document.attempts) == (Document.Status.INDEXED, 1, 2)


@pytest.mark.django_db
def test_a_worker_that_still_beats_keeps_its_document_however_long_it_reads(world):
    mine = claimed(uploaded(world), pid=workers.this_worker()[1], started_age=6 * 3600)  # alive, 6 h in
    elsewhere = claimed(uploaded(world, text_pdf([["Other", "Another file, another worker host."]]), "b.pdf"),
                        host="worker-2", pid=4242, heartbeat_age=5)
    missed = (settings.TURN_HEARTBEAT_SECONDS * workers.TURN_HEARTBEAT_MISSED_BEATS) + 5
    silent = claimed(uploaded(world, text_pdf([["Third", "A third file, whose worker went quiet."]]), "c.pdf"),
                     host="worker-3", pid=4343, heartbeat_age=missed)

    assert resume_stalled_documents() == [silent.pk]
    statuses = dict(Document.objects.filter(pk__in=[mine.pk, elsewhere.pk, silent.pk]).values_list("pk", "status"))
    assert statuses == {mine.pk: "extracting", elsewhere.pk: "extracting", silent.pk: "queued"}


@pytest.mark.django_db
def test_a_document_that_stopped_its_worker_three_times_is_failed_with_the_reason_and_can_be_retried(world):
    document = uploaded(world)
    Document.objects.filter(pk=document.pk).update(attempts=DOCUMENT_MAX_ATTEMPTS - 1)
    document = claimed(document, pid=dead_pid())
    assert document.attempts == DOCUMENT_MAX_ATTEMPTS

    assert resume_stalled_documents() == [document.pk]
    document.refresh_from_db()
    assert document.status == Document.Status.FAILED
    assert document.error.startswith(f"the worker stopped while reading this document {DOCUMENT_MAX_ATTEMPTS} times")
    with translation.override("zh-hans"):
        assert f"{DOCUMENT_MAX_ATTEMPTS} 次" in reason_label(document.error)
    with translation.override("en"):
        assert "not tried again automatically" in reason_label(document.error)
    assert AuditLog.objects.filter(event_type=AuditEvent.DOCUMENT_FAILED, object_id=str(document.pk)).exists()

    retry_document(document, actor=world.alice)  # a person decides to try again
    document.refresh_from_db()
    assert document.status == Document.Status.QUEUED


@pytest.mark.django_db(transaction=True)
def test_the_worker_beats_while_it_reads(world, settings):
    settings.TURN_HEARTBEAT_SECONDS = 0.2
    document = uploaded(world, scanned_pdf([["租赁合同", "月租金8000元，押金16000元。"]] * 2), "scan.pdf")
    assert process_document(document.pk) == Document.Status.INDEXED  # OCR: seconds a page
    document.refresh_from_db()
    assert document.ocr_pages == 2
    assert document.heartbeat_at > document.started_at, "the side thread beat while the pages were read"
