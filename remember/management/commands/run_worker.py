"""``manage.py run_worker``: django-tasks-db's ``db_worker`` plus a watchdog thread.

The watchdog re-enqueues turn jobs whose worker died (remember/liveness.py) every
``TURN_HEARTBEAT_SECONDS``, so a live worker takes them over within seconds even when idle.
Takes the same options as ``db_worker``; ``make run`` starts it (docs/production.md).
"""
from __future__ import annotations

import threading

from django_tasks_db.management.commands.db_worker import Command as DBWorkerCommand

from remember.turns import watch_stalled_turns


class Command(DBWorkerCommand):
    help = "Run background tasks (db_worker) and take over turn jobs left by dead workers."

    def handle(self, *args, **options) -> None:
        stop = threading.Event()
        watchdog = threading.Thread(target=watch_stalled_turns, args=(stop,), name="turn-watchdog", daemon=True)
        watchdog.start()
        try:
            super().handle(*args, **options)
        finally:
            stop.set()
