"""``manage.py run_worker``: django-tasks-db's ``db_worker`` plus a watchdog thread.

The watchdog re-enqueues turn jobs whose worker died (infra/workers.py) every
``settings.TURN_HEARTBEAT_SECONDS``, so a live worker takes them over within seconds even when idle.
Told to stop (SIGTERM, Ctrl-C), the worker closes the LLM request it is collecting at once —
the server stops generating it — and the job is asked again by the next worker
(``infra.llm.stop_generations``); db_worker's own graceful stop would let it run to its end.
Before each job it checks for an erasure made by another process (``memory.erasure_hooks``).
Takes the same options as ``db_worker``; ``make run`` starts it (docs/production.md).
"""
from __future__ import annotations

import threading
from types import FrameType

from django.utils.translation import gettext, gettext_lazy
from django_tasks_db.management.commands import db_worker
from django_tasks_db.management.commands.db_worker import Command as DBWorkerCommand

from infra.llm import stop_generations
from memory.erasure_hooks import follow_erasures, latest_erasure
from remember.turns import watch_stalled_turns


# db_worker's option help (django-tasks-db 0.13), by destination; an option it adds later keeps its own.
DB_WORKER_HELP = {
    "queue_name": gettext_lazy(
        "The queues to process. Separate multiple with a comma. To process all queues, use '*' (default: %(default)r)"
    ),
    "exclude_queues": gettext_lazy("Queues to exclude. Separate multiple with a comma."),
    "interval": gettext_lazy(
        "The interval (in seconds) to wait, when there are no tasks in the queue, before checking for tasks again "
        "(default: %(default)r)"
    ),
    "batch": gettext_lazy("Process all outstanding tasks, then exit. Can be used in combination with --max-tasks."),
    "reload": gettext_lazy(
        "Reload the worker on code changes. Not recommended for production as tasks may not be stopped cleanly "
        "(default: DEBUG)"
    ),
    "backend_name": gettext_lazy("The backend to operate on (default: %(default)r)"),
    "startup_delay": gettext_lazy("Don't add a small delay at startup."),
    "max_tasks": gettext_lazy("If provided, the maximum number of tasks the worker will execute before exiting."),
    "worker_id": gettext_lazy("Worker id. MUST be unique across worker pool (default: auto-generate)"),
}


class StoppingWorker(db_worker.Worker):
    """db_worker's worker whose graceful stop first closes the LLM requests in flight, and which
    forgets its cached content before a job when another process erased something since."""

    def run_task(self, db_task_result) -> None:
        follow_erasures(latest_erasure())
        super().run_task(db_task_result)

    def shutdown(self, signum: int, frame: FrameType | None) -> None:
        stop_generations()
        super().shutdown(signum, frame)


class Command(DBWorkerCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Run background tasks (db_worker) and take over turn jobs left by dead workers.")

    def add_arguments(self, parser) -> None:
        """db_worker's options, with their help in the operator's language (the wording is db_worker's)."""
        super().add_arguments(parser)
        for action in parser._actions:
            if action.dest in DB_WORKER_HELP:
                action.help = DB_WORKER_HELP[action.dest]

    def handle(self, *args, **options) -> None:
        stop = threading.Event()
        watchdog = threading.Thread(target=watch_stalled_turns, args=(stop,), name="turn-watchdog", daemon=True)
        watchdog.start()
        library_worker, db_worker.Worker = db_worker.Worker, StoppingWorker  # db_worker's handle builds it
        try:
            super().handle(*args, **options)
        finally:
            db_worker.Worker = library_worker
            stop.set()
