"""Documents whose worker stopped while reading them: back to the queue, or failed for good.

A worker that claims a document records its host and pid and beats a heartbeat on the row
every ``TURN_HEARTBEAT_SECONDS`` while it reads (``infra.workers``, as for turn jobs). When
that worker is gone — its pid no longer runs on this host, or its heartbeat is three beats old —
the watchdog of any live worker (``remember.turns.watch_stalled_turns``) puts the document back
in the queue and enqueues its job, audited ``document_resumed``. There is no lease: a 500-page
scan that still beats may read for as long as it needs.

A document that stopped its worker ``DOCUMENT_MAX_ATTEMPTS`` times is not tried again: a file
that kills the process reading it (the kernel's out-of-memory killer, a library crash) would
otherwise take every worker down in turn. It is failed with that reason; a person may retry
it once the cause is dealt with (docs/documents.md, "When a worker stops").
"""
from __future__ import annotations

import logging
from datetime import datetime

from django.utils import timezone

from documents.models import Document
from documents.services import document_fail, document_resume
from documents.ingest import enqueue_document
from infra.workers import holder_is_gone

logger = logging.getLogger("legalmem.pipeline")

#: Claims of one document after which a stopped worker fails it instead of queueing it again.
DOCUMENT_MAX_ATTEMPTS = 3
STOPPED_TOO_OFTEN = ("the worker stopped while reading this document {attempts} times "
                     "(killed, or out of memory); it is not tried again automatically")


def resume_stalled_documents(*, now: datetime | None = None, limit: int = 10) -> list[int]:
    """Queue again (or fail) the documents held by a worker that is gone; returns their ids.
    Safe from any process at any time: each change is conditional on the same holder."""
    now = now or timezone.now()
    held = (Document.objects.filter(status__in=(Document.Status.EXTRACTING, Document.Status.OCR))
            .order_by("started_at")
            .only("pk", "firm_id", "matter_id", "status", "attempts", "started_at", "worker_host",
                  "worker_pid", "heartbeat_at"))
    handled = []
    for document in held:
        if len(handled) >= limit:
            break
        if not holder_is_gone(document, now, lease=False):
            continue
        if document.attempts >= DOCUMENT_MAX_ATTEMPTS:
            document_fail(document, STOPPED_TOO_OFTEN.format(attempts=document.attempts))
        elif document_resume(document, gone_since=document.heartbeat_at or document.started_at):
            enqueue_document(document)
        else:
            continue  # it finished, or another watchdog took it meanwhile
        handled.append(document.pk)
    if handled:
        logger.warning("took over %d document(s) from a stopped worker: %s", len(handled), handled)
    return handled
