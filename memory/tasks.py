"""Background tasks (django-tasks, stored in PostgreSQL by django-tasks-db; ``manage.py
db_worker`` runs them and ``make run`` starts it)."""
from __future__ import annotations

from django_tasks import task

from memory.models import TurnExtraction


class TurnExtractionFailed(Exception):
    """The turn job gave up after its last attempt (its error is on the TurnExtraction row)."""


@task()
def extract_turn_task(turn_id: int) -> dict:
    """Run one turn job, then re-enqueue any job a dead worker left behind. Raises when the
    turn has failed for good, so the task result shows it as failed too."""
    from memory.pipeline.turns import process_turn, resume_stalled_turns

    turn = process_turn(turn_id)
    resume_stalled_turns(limit=10)
    if turn is None:
        return {"turn": turn_id, "status": "erased"}
    if turn.status == TurnExtraction.Status.FAILED:
        raise TurnExtractionFailed(f"turn {turn.pk} failed after {turn.attempts} attempts: {turn.last_error}")
    return {"turn": turn.pk, "status": turn.status, "attempts": turn.attempts, "decisions": len(turn.decisions)}


# --- records (docs/records.md) -----------------------------------------------------------------


@task()
def purge_expired_task() -> dict:
    """Purge closed matters past their firm's retention period (not on legal hold), then run
    again after ``RETENTION_CHECK_INTERVAL_SECONDS``: django-tasks has no periodic schedule."""
    from memory.services.retention import purge_expired

    try:
        report = purge_expired()
    finally:
        schedule_retention(again=True)
    return {"purged": len(report.purged), "held": len(report.held), "failed": len(report.failed)}


def schedule_retention(*, again: bool = False) -> bool:
    """Enqueue the purge job unless one is already waiting (``make run`` calls this at start)."""
    from datetime import timedelta

    from django.conf import settings
    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult

    waiting = DBTaskResult.objects.filter(task_path=purge_expired_task.module_path, status="READY")
    if waiting.exists():
        return False
    delay = settings.RETENTION_CHECK_INTERVAL_SECONDS if again else 0
    purge_expired_task.using(run_after=timezone.now() + timedelta(seconds=delay)).enqueue()
    return True
