"""One log line (and one count) per background job run: what ran, for which ids, how it
ended and how long it took. Every line written during the run carries the same ids."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django_tasks.signals import task_finished, task_started

from infra import metrics
from infra.logs.context import bind, pop, push
from infra.logs.events import log_event

logger = logging.getLogger("legalmem.jobs")

_running = threading.local()  # the worker thread's task id binding, between started and finished


def _task_started(sender, task_result, **kwargs) -> None:
    """The worker is about to run a task: its id is on every line the task writes."""
    _running.token = push(task_id=str(task_result.id))


def _task_finished(sender, task_result, **kwargs) -> None:
    token = getattr(_running, "token", None)
    if token is not None:
        _running.token = None
        try:
            pop(token)
        except (ValueError, RuntimeError):  # set in another context (not in db_worker's one thread)
            pass


# Connected when a task module imports this one, which the worker does before it runs the task.
task_started.connect(_task_started, dispatch_uid="legalmem_logs_task_started")
task_finished.connect(_task_finished, dispatch_uid="legalmem_logs_task_finished")


class JobRun:
    """What the job body tells the log line: more ids, its outcome, a few counts."""

    def __init__(self, ids: dict[str, Any]) -> None:
        self.ids = ids
        self.outcome = "done"
        self.fields: dict[str, Any] = {}

    def note(self, *, outcome: str | None = None, **fields: Any) -> None:
        """Set the outcome and add fields (ids or counts, never content) to the job's line."""
        if outcome is not None:
            self.outcome = outcome
        self.fields.update(fields)


@contextmanager
def job_run(job: str, **ids: Any) -> Iterator[JobRun]:
    """Run a job's body inside: its ids are bound for every line it writes, and one
    ``job`` line follows with the outcome (``error`` and the exception's type when it raised)
    and the duration; ``legalmem_jobs_total`` / ``legalmem_job_seconds`` count it."""
    run = JobRun(ids)
    started = time.perf_counter()
    error: str | None = None
    with bind(job=job, **ids):
        try:
            yield run
        except BaseException as exc:
            error = type(exc).__name__
            if run.outcome == "done":  # the body did not say how it ended
                run.outcome = "error"
            raise
        finally:
            seconds = time.perf_counter() - started
            metrics.JOBS.labels(job, run.outcome).inc()
            metrics.JOB_SECONDS.labels(job).observe(seconds)
            log_event(
                logger, "job", level=logging.ERROR if error else logging.INFO,
                outcome=run.outcome, error=error, duration_ms=round(seconds * 1000, 1),
                **run.fields,
            )
