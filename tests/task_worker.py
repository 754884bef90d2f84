"""Run queued tasks in a test the way ``manage.py db_worker`` does (django-tasks-db)."""
from __future__ import annotations

from django.db import transaction
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult


def run_worker_once(worker_class: type[Worker] = Worker) -> DBTaskResult:
    """Claim and run the next ready task exactly as ``manage.py db_worker`` does (``run_worker``:
    ``worker_class=StoppingWorker``)."""
    worker = worker_class(queue_names=["default"], interval=0, batch=True, backend_name="default",
                    startup_delay=False, max_tasks=1, worker_id="test-worker", excluded_queue_names=[])
    with transaction.atomic():  # the row lock of get_locked, as db_worker takes it
        task_result = DBTaskResult.objects.ready().get_locked()
        assert task_result is not None, "no ready task"
        task_result.claim(worker.worker_id)
    worker.run_task(task_result)
    task_result.refresh_from_db()
    return task_result
