"""The turn job's state machine (docs/write-path.md, "The turn job"): each change of a
``TurnExtraction``'s state is one action here, in its own transaction, with its rule — who may
claim a job, when a failure is retried and when it is given up — and its record (the
JOB_FAILED audit entry). The states themselves are the model's methods
(``memory/models/pipeline.py``: ``begin_attempt``, ``end``, ``give_up``, ``retry_at``); the work
between them (extract, route) and the task that runs it are ``remember/turns.py``.
"""
from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone

from infra.llm import LLMRejected, LLMStopped
from infra.locks import release_if_frozen
from memory.models import AuditEvent, Message, RoutingDecision, TurnExtraction
from memory.services.audit import record
from memory.services.conversations import mark_repeats_memory
from remember.apply import hold_turn
from remember.extract import only_repeats_memory
from infra.workers import beating, holder_is_gone, this_worker

# Turn extraction jobs (docs/write-path.md): the backoff before a retry (x 2^(attempt-1)); the
# attempts are settings.TURN_MAX_ATTEMPTS.
TURN_RETRY_BACKOFF_SECONDS = 30.0

SYSTEM_ACTOR = "system:pipeline"

logger = logging.getLogger("legalmem.pipeline")


class TurnError(ValueError):
    """The two messages do not form a turn (roles, conversation)."""


def _check_pair(user_message: Message, assistant_message: Message) -> None:
    if user_message.conversation_id != assistant_message.conversation_id:
        raise TurnError("the user message and the reply belong to different conversations")
    if user_message.role != Message.Role.USER or assistant_message.role != Message.Role.ASSISTANT:
        raise TurnError("a turn is a user message followed by an assistant reply")


# --- new jobs -----------------------------------------------------------------------------


def do_create_turn(user_message: Message, assistant_message: Message, *,
                   source_type: str) -> tuple[TurnExtraction, bool]:
    """The job of this reply, made now (True) or found (a concurrent caller's row wins)."""
    _check_pair(user_message, assistant_message)
    try:
        with transaction.atomic():
            return TurnExtraction.objects.get_or_create(
                assistant_message=assistant_message,
                defaults={
                    "firm_id": assistant_message.firm_id,
                    "conversation_id": assistant_message.conversation_id,
                    "user_message": user_message,
                    "source_type": source_type,
                },
            )
    except IntegrityError:
        return TurnExtraction.objects.get(assistant_message=assistant_message), False


def do_create_turns(pairs: list[tuple[Message, Message]], *, source_type: str) -> list[TurnExtraction]:
    """``do_create_turn`` for many turns at once (an import): one read, one insert for the
    missing ones, one read back; no task is enqueued. Returns the rows in ``pairs`` order."""
    for user_message, assistant_message in pairs:
        _check_pair(user_message, assistant_message)
    replies = [assistant_message.pk for _, assistant_message in pairs]
    existing = set(TurnExtraction.objects.filter(assistant_message_id__in=replies).values_list(
        "assistant_message_id", flat=True))
    missing = [
        TurnExtraction(firm_id=reply.firm_id, conversation_id=reply.conversation_id, user_message=question,
                       assistant_message=reply, source_type=source_type)
        for question, reply in pairs if reply.pk not in existing
    ]
    if missing:
        with transaction.atomic(savepoint=False):
            TurnExtraction.objects.bulk_create(missing, ignore_conflicts=True)  # a concurrent import's rows win
    rows = {turn.assistant_message_id: turn for turn in TurnExtraction.objects.filter(assistant_message_id__in=replies)}
    return [rows[reply] for reply in replies]


def do_name_task(turn_id: int, task_id: str) -> None:
    """Name the queued task that runs the job."""
    with transaction.atomic(savepoint=False):
        TurnExtraction.objects.filter(pk=turn_id).update(task_id=task_id[:64])


# --- claiming -----------------------------------------------------------------------------


def claimable(turn: TurnExtraction, now: datetime) -> bool:
    """May this process run this (locked) job now? Not when finished, not yet due, or held by a
    live worker; a ``running`` job whose worker is gone is taken over (infra/workers.py)."""
    if turn.is_finished:
        return False
    if turn.status == TurnExtraction.Status.RUNNING:
        if not holder_is_gone(turn, now):
            return False
        logger.warning("turn %s was left running since %s by a dead worker (%s pid %s); resuming",
                       turn.pk, turn.started_at, turn.worker_host, turn.worker_pid)
    elif turn.next_attempt_at and turn.next_attempt_at > now:
        return False
    return True


def do_claim_turn(turn_id: int, *, now: datetime | None = None) -> TurnExtraction | None:
    """Mark the job running for this worker, or None if it is finished, not yet due, or held
    by a live worker. A ``running`` job whose worker is gone is taken over (crash-and-resume)."""
    now = now or timezone.now()
    with transaction.atomic():
        release_if_frozen()  # a worker stopped holding this row would block every takeover of it
        turn = TurnExtraction.objects.select_for_update().filter(pk=turn_id).first()
        if turn is None:  # erased before its job ran
            return None
        if not claimable(turn, now):
            return None
        turn.begin_attempt(now, this_worker())
        turn.save(update_fields=[*TurnExtraction.CLAIM_FIELDS, "updated_at"])
    return turn


def do_claim_turns(turn_ids: Iterable[int]) -> dict[int, TurnExtraction]:
    """Claim these jobs in one locked read and one bulk update, with ``do_claim_turn``'s rules;
    rows another worker holds right now are skipped (they are that worker's)."""
    now = timezone.now()
    with transaction.atomic():
        rows = list(
            TurnExtraction.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(pk__in=list(turn_ids))
            .select_related("conversation__user", "conversation__firm", "conversation__matter",
                            "user_message", "assistant_message")
        )
        claimed = [turn for turn in rows if claimable(turn, now)]
        for turn in claimed:
            turn.begin_attempt(now, this_worker())
        TurnExtraction.objects.bulk_update(claimed, [*TurnExtraction.CLAIM_FIELDS, "updated_at"])
    return {turn.pk: turn for turn in claimed}


@contextmanager
def heartbeat(*turn_ids: int) -> Iterator[None]:
    """Beat the heartbeat of the jobs this process holds among ``turn_ids`` from a side thread
    while the body runs (``infra.workers.beating``)."""
    if not turn_ids:
        yield
        return
    name = f"turn-{turn_ids[0]}-heartbeat" if len(turn_ids) == 1 else f"{len(turn_ids)}-turns-heartbeat"
    host, pid = this_worker()
    with beating(name, lambda at: do_beat_turns(list(turn_ids), host=host, pid=pid, at=at)):
        yield


def do_beat_turns(turn_ids: Sequence[int], *, host: str, pid: int, at: datetime) -> int:
    """The heartbeat of the running jobs this worker holds; returns how many beat. A worker
    frozen in mid-beat loses its session, not the rows (``release_if_frozen``)."""
    with transaction.atomic(savepoint=False):
        release_if_frozen()
        return TurnExtraction.objects.filter(
            pk__in=turn_ids, status=TurnExtraction.Status.RUNNING, worker_host=host, worker_pid=pid
        ).update(heartbeat_at=at)


# --- extraction stored, job finished --------------------------------------------------------


def do_store_extraction(turn: TurnExtraction) -> None:
    """Store what the engine extracted (``EXTRACTION_FIELDS``, set on ``turn``), so a resumed job
    routes the same items; a reply that only repeats memory is marked so."""
    with transaction.atomic():
        hold_turn(turn)
        turn.save(update_fields=[*TurnExtraction.EXTRACTION_FIELDS, "updated_at"])
        if only_repeats_memory(turn.assistant_message):
            mark_repeats_memory(turn.assistant_message)


def do_store_extractions(turns: list[TurnExtraction]) -> set[int]:
    """Store these turns' extractions in one transaction (``do_store_extraction`` does it one turn
    at a time); returns the ids stored — a turn erased meanwhile is not (docs/records.md)."""
    if not turns:
        return set()
    now = timezone.now()
    with transaction.atomic():
        alive = set(TurnExtraction.objects.select_for_update().filter(pk__in=[t.pk for t in turns]).order_by("pk")
                    .values_list("pk", flat=True))
        kept = [turn for turn in turns if turn.pk in alive]
        for turn in kept:
            turn.updated_at = now
        TurnExtraction.objects.bulk_update(kept, [*TurnExtraction.EXTRACTION_FIELDS, "updated_at"])
    return alive


def do_finish_turn(turn: TurnExtraction, status: str) -> None:
    """running → done or skipped, with the routing decisions the job made."""
    turn.end(status, timezone.now())
    with transaction.atomic(savepoint=False):  # inside the bulk import's turn transaction: no savepoint
        hold_turn(turn)
        turn.decisions = [d.as_dict() for d in RoutingDecision.objects.filter(source_key=turn.source_key)]
        turn.save(update_fields=["status", "finished_at", "next_attempt_at", "decisions", "updated_at"])


def do_record_turn_failure(turn: TurnExtraction, exc: Exception) -> datetime | None:
    """Record the error; schedule a retry with backoff (its time is returned, for the caller to
    enqueue once this commits), or fail for good after ``settings.TURN_MAX_ATTEMPTS`` (None)."""
    error = f"{type(exc).__name__}: {exc}"[:4000]
    with transaction.atomic():
        turn = TurnExtraction.objects.select_for_update().select_related("conversation").get(pk=turn.pk)
        # A refusal (bad key, unknown model, every JSON mode refused) is the same on every
        # attempt: fail now instead of asking the server again over the next minutes.
        gave_up = turn.attempts >= settings.TURN_MAX_ATTEMPTS or isinstance(exc, LLMRejected)
        if gave_up and not isinstance(exc, LLMStopped):
            logger.error("turn %s failed after %d attempts: %s", turn.pk, turn.attempts, error, exc_info=exc)
            turn.give_up(error, timezone.now())
            turn.save(update_fields=["status", "last_error", "finished_at", "next_attempt_at", "updated_at"])
            record(
                actor=SYSTEM_ACTOR,
                event=AuditEvent.JOB_FAILED,
                firm=turn.firm,
                object_type="turn_extraction",
                object_id=turn.pk,
                after={"status": turn.status, "attempts": turn.attempts, "error": error},
                matter_id=turn.conversation.matter_id,
            )
            return None
        stopped = isinstance(exc, LLMStopped)  # the worker was told to stop: no attempt lost, the next one asks now
        delay = 0 if stopped else TURN_RETRY_BACKOFF_SECONDS * (2 ** (turn.attempts - 1))
        turn.retry_at(error, timezone.now() + timedelta(seconds=delay), attempt_lost=not stopped)
        turn.save(update_fields=["status", "attempts", "last_error", "next_attempt_at", "updated_at"])
        logger.warning(
            "turn %s attempt %d/%d failed (%s); retrying in %.0f s",
            turn.pk, turn.attempts, settings.TURN_MAX_ATTEMPTS, error, delay,
        )
        return turn.next_attempt_at
