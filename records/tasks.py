"""Records' background task (django-tasks, stored in PostgreSQL by django-tasks-db; ``manage.py
db_worker`` runs it and ``make run`` starts it): the retention purge (docs/records.md). The turn
job's task is defined beside the job in ``remember.turns``.
"""
from __future__ import annotations

from django_tasks import task

from infra.logs.jobs import job_run

__all__ = ["purge_expired_task", "schedule_retention"]

#: The purge job looks for closed matters past their firm's retention period this often (6 h).
RETENTION_CHECK_INTERVAL_SECONDS = 21600.0


@task()
def purge_expired_task() -> dict:
    """Purge closed matters past their firm's retention period (not on legal hold), then run
    again after ``RETENTION_CHECK_INTERVAL_SECONDS``: django-tasks has no periodic schedule."""
    from records.services.retention import purge_expired

    try:
        with job_run("retention_purge") as run:
            report = purge_expired()
            run.note(purged=len(report.purged), held=len(report.held), failed=len(report.failed))
    finally:
        schedule_retention(again=True)
    return {"purged": len(report.purged), "held": len(report.held), "failed": len(report.failed)}


def schedule_retention(*, again: bool = False) -> bool:
    """Enqueue the purge job unless one is already waiting (``make run`` calls this at start)."""
    from datetime import timedelta

    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult

    waiting = DBTaskResult.objects.filter(task_path=purge_expired_task.module_path, status="READY")
    if waiting.exists():
        return False
    delay = RETENTION_CHECK_INTERVAL_SECONDS if again else 0
    purge_expired_task.using(run_after=timezone.now() + timedelta(seconds=delay)).enqueue()
    return True
