"""After a committed change of a note or of a matter assignment, refresh the firm's stored graphs."""
from __future__ import annotations

from functools import partial

from django.db import transaction

from memory.models import Matter, MatterAssignment, Note


def _after_commit(firm_id: int | None) -> None:
    if firm_id is not None:
        from navigation.tasks import schedule_refresh

        if not _already_scheduled(schedule_refresh, firm_id):
            transaction.on_commit(partial(schedule_refresh, firm_id), robust=True)


def _already_scheduled(schedule_refresh, firm_id: int) -> bool:
    """Is this firm's refresh already waiting for this commit, registered where it survives as
    long as the current savepoint does? (An import's turn changes dozens of notes in one
    transaction: one refresh check after it commits is enough.)"""
    connection = transaction.get_connection()
    if not connection.in_atomic_block:
        return False
    open_savepoints = set(connection.savepoint_ids)
    return any(
        isinstance(func, partial) and func.func is schedule_refresh and func.args == (firm_id,)
        and sids <= open_savepoints
        for sids, func, _robust in connection.run_on_commit
    )


def note_changed(sender, instance: Note, **kwargs) -> None:
    _after_commit(instance.firm_id)


def assignment_changed(sender, instance: MatterAssignment, **kwargs) -> None:
    _after_commit(Matter.objects.filter(pk=instance.matter_id).values_list("firm_id", flat=True).first())


def connect() -> None:
    from django.db.models.signals import post_delete, post_save

    post_save.connect(note_changed, sender=Note, dispatch_uid="navigation.note_saved")
    post_delete.connect(note_changed, sender=Note, dispatch_uid="navigation.note_deleted")
    post_save.connect(assignment_changed, sender=MatterAssignment, dispatch_uid="navigation.assignment_saved")
    post_delete.connect(assignment_changed, sender=MatterAssignment, dispatch_uid="navigation.assignment_deleted")
