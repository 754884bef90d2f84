"""Writing turn extraction jobs (``TurnExtraction``): the write path's durable job rows.

The job's rules — when it may be claimed, retried, taken over — are the write path's
(``remember.turns``, ``remember.bulk``, ``remember.liveness``); the rows are written here. Job
bookkeeping is not audited row by row: a job that fails for good is (``remember.turns``), and
what it wrote is, through the notes services. Each write joins the caller's transaction.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from django.db import IntegrityError, transaction

from infra.locks import release_if_frozen
from memory.models import Message, TurnExtraction


def turn_extraction_get_or_create(*, user_message: Message, assistant_message: Message,
                                  source_type: str) -> tuple[TurnExtraction, bool]:
    """The job of this reply, made now (True) or found (a concurrent caller's row wins)."""
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


def turn_extractions_add(missing: Sequence[TurnExtraction]) -> None:
    """Insert many new jobs in one statement (an import); a concurrent import's rows win."""
    with transaction.atomic(savepoint=False):
        TurnExtraction.objects.bulk_create(missing, ignore_conflicts=True)


def turn_extraction_set_task(turn_id: int, task_id: str) -> None:
    """Name the queued task that runs the job."""
    with transaction.atomic(savepoint=False):
        TurnExtraction.objects.filter(pk=turn_id).update(task_id=task_id[:64])


def turn_extraction_save(turn: TurnExtraction, fields: Iterable[str]) -> None:
    """Store these fields of the job as set on ``turn`` (and ``updated_at``)."""
    with transaction.atomic(savepoint=False):
        turn.save(update_fields=[*fields, "updated_at"])


def turn_extractions_save(turns: Sequence[TurnExtraction], fields: Iterable[str]) -> None:
    """Store these fields (and ``updated_at`` as set on each row) of many jobs in one statement."""
    with transaction.atomic(savepoint=False):
        TurnExtraction.objects.bulk_update(turns, [*fields, "updated_at"])


def turn_extractions_beat(turn_ids: Sequence[int], *, host: str, pid: int, at: datetime) -> int:
    """The heartbeat of the running jobs this worker holds; returns how many beat. A worker
    frozen in mid-beat loses its session, not the rows (``release_if_frozen``)."""
    with transaction.atomic(savepoint=False):
        release_if_frozen()
        return TurnExtraction.objects.filter(
            pk__in=turn_ids, status=TurnExtraction.Status.RUNNING, worker_host=host, worker_pid=pid
        ).update(heartbeat_at=at)
