"""The turn job: durable, idempotent, retried extraction of one chat turn into memory.

Life of a ``TurnExtraction``: ``pending`` → ``running`` → ``done`` / ``skipped``; on an
LLM or embedding outage (or any other error) it goes back to ``pending`` with exponential
backoff (``TURN_RETRY_BACKOFF_SECONDS`` × 2^(attempt−1)) and a new background task, until
``settings.TURN_MAX_ATTEMPTS`` — then ``failed``, with the error on the row and a JOB_FAILED audit
entry. A job left ``running`` by a dead worker (its pid gone on this host, its heartbeat stale,
or past ``TURN_LEASE_SECONDS``; see infra/workers.py) is taken over by
``process_turn`` and re-enqueued by ``resume_stalled_turns``.

The job's states and the actions that change them (claim, store the extraction, finish, retry or
fail) are ``remember/services/turn_jobs.py``; this module is the work between them, the task
that runs it and the watchdog that re-enqueues what a dead worker left.

Idempotent: one row per assistant message; extracted items are stored before routing, so
a resumed job routes the same items; each item's routing decision is unique per turn and
content hash and commits with its note, so no item is written twice.
"""
from __future__ import annotations

import dataclasses
import logging
import threading
from datetime import datetime
from functools import partial

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Exists, OuterRef, Q, QuerySet, UUIDField, Value
from django.db.models.functions import Cast, Coalesce, NullIf
from django.utils import timezone
from django_tasks import TaskResultStatus, task
from django_tasks_db.models import DBTaskResult

from infra.logs.jobs import job_run
from infra.locks import lock_for_transaction
from memory.models import Message, SourceType, TurnExtraction
from infra import workers
from remember.apply import TurnGone, apply_items, reply_speaker
from remember.client_name import client_name_before, relayed_client_before
from remember.services.consolidation import do_consolidate_overflow
from documents.takeover import resume_stalled_documents
from remember.drafts import Provenance, TurnSource
from remember.extract import ENGINE_SKIPPED, extract_turn, extractable_reply
from remember.extraction import ExtractedItem
from infra.workers import holder_is_gone, lease_cutoff
from remember.message_index import index_conversation
from remember.persona import episodic_twins
from remember.services.turn_jobs import (
    SYSTEM_ACTOR,
    do_claim_turn,
    do_create_turn,
    do_finish_turn,
    do_name_task,
    do_record_turn_failure,
    do_store_extraction,
    heartbeat,
)

logger = logging.getLogger("legalmem.pipeline")


# --- enqueue ------------------------------------------------------------------------


def enqueue_turn_extraction(
    user_message: Message, assistant_message: Message, *, source_type: str = SourceType.CHAT
) -> TurnExtraction:
    """Record the turn's job and enqueue its background task once the transaction commits.
    Calling it again for the same assistant message returns the same job (no second task
    unless it is still pending)."""
    turn, created = do_create_turn(user_message, assistant_message, source_type=source_type)
    if created or turn.status == TurnExtraction.Status.PENDING:
        transaction.on_commit(partial(_enqueue_task, turn.pk))
    return turn


def _enqueue_task(turn_id: int, run_after: datetime | None = None) -> None:
    """Put the job on the durable queue; if that fails the turn stays pending for resume."""
    try:
        task = extract_turn_task.using(run_after=run_after) if run_after else extract_turn_task
        result = task.enqueue(turn_id)
    except Exception:  # the row is the source of truth; resume_stalled_turns re-enqueues
        logger.exception("could not enqueue extraction of turn %s; it stays pending", turn_id)
        return
    do_name_task(turn_id, str(result.id))


# --- run --------------------------------------------------------------------------------


def process_turn(turn_id: int, *, provenance: Provenance | None = None) -> TurnExtraction | None:
    """The job body (also callable synchronously): embed the conversation's new messages,
    extract, route, link, update the persona, then consolidate working-memory overflow. Errors
    never escape: they are recorded on the row and retried or failed. A caller running the job
    itself may name the turn (``provenance``): the notes it makes carry that source id and
    tags. Returns the row in its new state, or None once the turn was erased (docs/records.md)."""
    turn = do_claim_turn(turn_id)
    if turn is None:
        return TurnExtraction.objects.filter(pk=turn_id).first()
    with heartbeat(turn.pk):
        index_conversation(turn.conversation_id)  # every turn is memory, whatever extraction makes of it
        try:
            _run(turn, provenance)
        except TurnGone as gone:  # erased, or taken over by another worker: that one answers for the row
            logger.info("%s; this job wrote nothing after that", gone)
            return None
        except Exception as exc:  # noqa: BLE001 - every failure is recorded, retried or failed
            if not TurnExtraction.objects.filter(pk=turn_id).exists():  # erased under it (its messages went first)
                logger.info("turn %s was erased while its job ran", turn_id)
                return None
            after_failure(turn, exc)
            return TurnExtraction.objects.get(pk=turn_id)
    try:
        do_consolidate_overflow(turn.conversation, actor=SYSTEM_ACTOR, provenance=provenance)
    except Exception:  # noqa: BLE001 - the turn is done; the overflow is retried after the next turn
        logger.exception("consolidation of conversation %s failed; will retry after the next turn", turn.conversation_id)
    return TurnExtraction.objects.get(pk=turn_id)


def _source_for(turn: TurnExtraction) -> TurnSource:
    conversation, user_msg, reply = turn.conversation, turn.user_message, turn.assistant_message
    if turn.source_type == SourceType.IMPORT and conversation.external_id:
        source_id = f"{conversation.external_id}:{user_msg.external_id or user_msg.pk}-{reply.external_id or reply.pk}"
    else:
        source_id = f"turn:{turn.pk}"
    return TurnSource(
        conversation=conversation,
        user_message=user_msg,
        assistant_message=reply,
        source_type=turn.source_type,
        source_id=source_id[:200],
        source_key=turn.source_key,
    )


def _run(turn: TurnExtraction, provenance: Provenance | None) -> None:
    if extract_items(turn):
        apply_turn(turn, provenance=provenance)


def extract_items(turn: TurnExtraction) -> bool:
    """Extract the turn's items once (stored on the row, so a resumed job routes the same
    items); False when the engine skipped the turn (it is finished as ``skipped``)."""
    if turn.items is None:
        run_extraction(turn)
        do_store_extraction(turn)
    return unless_skipped(turn)


def run_extraction(turn: TurnExtraction) -> None:
    """Run the extraction engine on the turn and set its ``TurnExtraction.EXTRACTION_FIELDS`` (not saved)."""
    user_msg, reply = turn.user_message, turn.assistant_message
    outcome = extract_turn(
        user_msg.content, extractable_reply(reply),
        user_name=user_msg.speaker, reply_name=reply_speaker(turn.source_type, reply),
        client_name=client_name_before(user_msg), relayed_client=relayed_client_before(user_msg),
        said_on=timezone.localtime(user_msg.said_at).date() if user_msg.said_at else None,
    )
    turn.items = [dataclasses.asdict(item) for item in outcome.items]
    turn.rejected = outcome.rejected_reasons
    turn.added = outcome.added_reasons
    turn.engine = outcome.engine


def unless_skipped(turn: TurnExtraction) -> bool:
    """False, finishing the job as ``skipped``, when the engine skipped the turn."""
    if turn.engine == ENGINE_SKIPPED:
        do_finish_turn(turn, TurnExtraction.Status.SKIPPED)
        return False
    return True


def items_to_write(turn: TurnExtraction) -> list[ExtractedItem]:
    """The extracted items plus their episodic twins, in routing order (what gets embedded)."""
    items = [ExtractedItem(**data) for data in turn.items or []]
    return [*items, *episodic_twins(items, _source_for(turn))] if items else []


def apply_turn(turn: TurnExtraction, vectors=None, *, provenance: Provenance | None = None) -> None:
    """Route the extracted items (``vectors``: their embeddings in ``items_to_write`` order,
    when already computed) and finish the job as done."""
    items = [ExtractedItem(**data) for data in turn.items]
    apply_items(items, _source_for(turn).with_provenance(provenance), actor=SYSTEM_ACTOR, turn=turn,
                vectors=vectors)
    do_finish_turn(turn, TurnExtraction.Status.DONE)


def after_failure(turn: TurnExtraction, exc: Exception) -> None:
    """Record the failure (``do_record_turn_failure``) and enqueue the retry it schedules once
    that commits."""
    retry_at = do_record_turn_failure(turn, exc)
    if retry_at is not None:
        transaction.on_commit(partial(_enqueue_task, turn.pk, retry_at))


def resume_stalled_turns(*, now: datetime | None = None, limit: int = 100) -> list[int]:
    """Re-enqueue jobs whose worker died (``running`` with its process gone, its heartbeat stale
    or past the lease) or whose task was lost (``pending`` and overdue by a lease). Safe to run
    any time, from any process: a job whose new task still waits is not enqueued again, and the
    watchdogs of several workers look and enqueue one after the other (docs/operations.md,
    "Several servers and workers")."""
    now = now or timezone.now()
    with transaction.atomic():
        lock_for_transaction("turns.resume", 0)
        running = (
            TurnExtraction.objects.filter(status=TurnExtraction.Status.RUNNING)
            .exclude(Exists(_task_on_its_way(now)))  # already re-enqueued: its task waits or is claiming it
            .order_by("created_at")
            .only("pk", "started_at", "heartbeat_at", "worker_host", "worker_pid")
        )
        abandoned = [turn.pk for turn in running if holder_is_gone(turn, now)][:limit]
        overdue = (
            TurnExtraction.objects.filter(_overdue(lease_cutoff(now)))
            .exclude(Exists(_task_on_its_way(now)))  # its task is only waiting in a long queue
            .order_by("created_at")
            .values_list("pk", flat=True)
        )
        ids = abandoned + list(overdue[: limit - len(abandoned)])
        for turn_id in ids:
            _enqueue_task(turn_id)
    if ids:
        logger.warning("re-enqueued %d stalled turn extraction(s): %s", len(ids), ids)
    return ids


def _task_on_its_way(now: datetime) -> QuerySet[DBTaskResult]:
    """The job's last task, if the job is not lost: still waiting to run, or started after the
    job's last claim (its creation, if never claimed) less than a heartbeat cutoff ago — a worker
    is between starting the task and claiming the row. The watchdog does not enqueue such a job
    again. Should that worker die before its claim, its task looks stale after the cutoff and the
    job is enqueued again. Read by primary key: the task table keeps every task ever run."""
    task = Cast(NullIf(OuterRef("task_id"), Value("")), UUIDField())  # a job without a task has ''
    claiming = Q(status=TaskResultStatus.RUNNING, started_at__gte=workers.heartbeat_cutoff(now),
                 started_at__gt=Coalesce(OuterRef("started_at"), OuterRef("created_at")))
    return DBTaskResult.objects.filter(Q(status=TaskResultStatus.READY) | claiming, id=task)


def _overdue(cutoff: datetime) -> Q:
    """Pending jobs whose task should have run a lease ago (the task was lost)."""
    return Q(status=TurnExtraction.Status.PENDING) & (
        Q(next_attempt_at__lt=cutoff) | Q(next_attempt_at__isnull=True, created_at__lt=cutoff)
    )


# --- the background task ------------------------------------------------------------------


class TurnExtractionFailed(Exception):
    """The turn job gave up after its last attempt (its error is on the TurnExtraction row)."""


@task()
def extract_turn_task(turn_id: int) -> dict:
    """Run one turn job, then re-enqueue any job a dead worker left behind. Raises when the
    turn has failed for good, so the task result shows it as failed too. Defined beside the
    job it runs and the retries that enqueue it again, so the two need no import cycle."""
    with job_run("extract_turn", turn_id=turn_id) as run:  # its log line (docs/operations.md, "Logs")
        turn = process_turn(turn_id)
        resume_stalled_turns(limit=10)
        if turn is not None:
            run.note(outcome="retry" if turn.status == TurnExtraction.Status.PENDING else turn.status,
                     firm_id=turn.firm_id, conversation_id=turn.conversation_id, attempts=turn.attempts,
                     decisions=len(turn.decisions or []))
        else:
            run.note(outcome="erased")
    if turn is None:
        return {"turn": turn_id, "status": "erased"}
    if turn.status == TurnExtraction.Status.FAILED:
        raise TurnExtractionFailed(f"turn {turn.pk} failed after {turn.attempts} attempts: {turn.last_error}")
    return {"turn": turn.pk, "status": turn.status, "attempts": turn.attempts, "decisions": len(turn.decisions)}


def watch_stalled_turns(stop: threading.Event) -> None:
    """A live worker's side thread: every heartbeat period, re-enqueue jobs — and documents
    being read — whose worker is gone, so an idle worker takes them over within seconds
    (``manage.py run_worker`` starts it; documents: ``documents.takeover``)."""
    try:
        while not stop.wait(settings.TURN_HEARTBEAT_SECONDS):
            try:
                resume_stalled_turns(limit=10)
                resume_stalled_documents(limit=10)
            except Exception:  # noqa: BLE001 - the next round tries again
                logger.warning("looking for abandoned turn jobs or documents failed", exc_info=True)
            finally:
                connection.close()
    finally:
        connection.close()
