"""Retention and legal hold: the scheduled purge erases closed matters past the firm's period,
keeps held ones, lists both in a dry run; holds and closings are audited."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from memory.models import AuditEvent, AuditLog, Matter, Note
from records.services.retention import (
    RecordsError,
    close_matter,
    lift_legal_hold,
    purge_expired,
    reopen_matter,
    set_legal_hold,
    set_retention,
)
from records.tasks import purge_expired_task, schedule_retention
from tests.records.conftest import SECRET_NAME, tables_containing
from tests.task_worker import run_worker_once

pytestmark = pytest.mark.django_db


@pytest.fixture
def expired(world, deposit_memory):
    """Firm A keeps closed matters 30 days; deposit and laptop closed 40 days ago, laptop on hold."""
    set_retention(world.firm_a, 30, actor=world.alice)
    long_ago = timezone.now() - timedelta(days=40)
    close_matter(world.matter_deposit, actor=world.alice, when=long_ago)
    close_matter(world.matter_laptop, actor=world.alice, when=long_ago)
    close_matter(world.matter_secret, actor=world.alice, when=timezone.now() - timedelta(days=10))
    set_legal_hold(world.matter_laptop, actor=world.alice, reason="appeal pending")
    return world


def test_the_dry_run_lists_what_would_go_and_what_a_hold_keeps(expired, capsys):
    laptop_notes = Note.objects.filter(matter=expired.matter_laptop).count()
    call_command("purge_expired", "--dry-run")
    out = capsys.readouterr().out
    assert f"would purge matter {expired.matter_deposit.reference}" in out
    assert f"kept matter {expired.matter_laptop.reference}" in out
    assert "appeal pending" in out
    assert expired.matter_secret.reference not in out  # closed 10 days ago: not yet
    assert tables_containing(SECRET_NAME)
    assert Note.objects.filter(matter=expired.matter_laptop).count() == laptop_notes


def test_the_scheduled_job_purges_expired_matters_but_not_held_ones_and_runs_again(expired):
    laptop_notes = Note.objects.filter(matter=expired.matter_laptop).count()
    assert laptop_notes
    assert schedule_retention()
    assert not schedule_retention()  # one waiting job at a time
    result = run_worker_once()
    assert result.status == "SUCCESSFUL", result.traceback
    assert result.return_value == {"purged": 1, "held": 1, "failed": 0}
    assert tables_containing(SECRET_NAME) == {}
    assert Matter.objects.get(pk=expired.matter_deposit.pk).erased_at is not None
    assert Note.objects.filter(matter=expired.matter_laptop).count() == laptop_notes
    assert Matter.objects.get(pk=expired.matter_secret.pk).erased_at is None
    tombstone = AuditLog.objects.get(event_type=AuditEvent.ERASED, object_id=str(expired.matter_deposit.pk))
    assert tombstone.actor_label == "system:retention"
    assert tombstone.extra["kind"] == "retention"
    again = DBTaskResult.objects.get(task_path=purge_expired_task.module_path, status="READY")
    assert again.run_after > timezone.now() + timedelta(hours=1)

    lift_legal_hold(Matter.objects.get(pk=expired.matter_laptop.pk), actor=expired.alice, reason="appeal decided")
    report = purge_expired()
    assert [m.pk for m, _ in report.purged] == [expired.matter_laptop.pk]
    assert not Note.objects.filter(matter=expired.matter_laptop).exists()


def test_without_a_retention_period_nothing_is_purged(world, deposit_memory):
    close_matter(world.matter_deposit, actor=world.alice, when=timezone.now() - timedelta(days=4000))
    assert purge_expired().lines() == ["nothing is past its retention period"]
    assert tables_containing(SECRET_NAME)


def test_holds_and_closings_are_audited_and_checked(world):
    with pytest.raises(RecordsError, match="reason"):
        set_legal_hold(world.matter_deposit, actor=world.alice, reason=" ")
    set_legal_hold(world.matter_deposit, actor=world.alice, reason="regulator inquiry")
    lift_legal_hold(world.matter_deposit, actor=world.alice, reason="inquiry closed")
    close_matter(world.matter_deposit, actor=world.alice)
    reopen_matter(world.matter_deposit, actor=world.alice)
    events = list(AuditLog.objects.filter(object_type="matter", object_id=str(world.matter_deposit.pk))
                  .order_by("id").values_list("event_type", "actor_label"))
    assert events[-4:] == [
        (AuditEvent.LEGAL_HOLD_SET, "alice"), (AuditEvent.LEGAL_HOLD_LIFTED, "alice"),
        (AuditEvent.MATTER_CLOSED, "alice"), (AuditEvent.MATTER_REOPENED, "alice"),
    ]
    with pytest.raises(RecordsError, match="whole number"):
        set_retention(world.firm_a, -1, actor=world.alice)
