"""Background tasks (django-tasks, stored in PostgreSQL by django-tasks-db; ``manage.py
db_worker`` runs them and ``make run`` starts it).

The turn job's task is defined beside the job in ``memory.pipeline.turns`` (the job enqueues
its own retries); it is named here too, so tasks queued under this path still run.
"""
from __future__ import annotations

from memory.pipeline.turns import TurnExtractionFailed, extract_turn_task

__all__ = ["TurnExtractionFailed", "extract_turn_task"]
