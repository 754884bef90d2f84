"""After a committed change of a note or of a matter assignment, refresh the firm's stored graphs."""
from __future__ import annotations

from functools import partial

from django.db import transaction

from memory.models import Matter, MatterAssignment, Note
from memory.transaction_memo import first_time


def _after_commit(firm_id: int | None) -> None:
    if firm_id is None:
        return
    from navigation.tasks import schedule_refresh

    # In a bulk import's turn transaction dozens of notes change: one refresh check after the
    # commit is enough (memory/transaction_memo.py).
    if first_time(("graph-refresh", firm_id)):
        transaction.on_commit(partial(schedule_refresh, firm_id), robust=True)


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
