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
