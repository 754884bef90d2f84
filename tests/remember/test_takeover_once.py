"""A job left by a dead worker is re-enqueued once, however many watchdogs see it: not again
while its new task waits, and not twice by workers looking at the same moment
(remember/turns.py ``resume_stalled_turns``; the scale-out test kills workers for real)."""
from __future__ import annotations

import socket
from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from memory.models import TurnExtraction
from infra.workers import TURN_LEASE_SECONDS
from remember.turns import resume_stalled_turns
from tests.concurrency import all_at_once
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER
from tests.remember.test_worker_takeover import dead_pid, mark_running

pytestmark = pytest.mark.django_db(transaction=True)


def left_by_a_dead_worker(make_turn, conversation, *, heartbeat_age: float):
    """A job marked running by a worker whose pid is gone, its last beat ``heartbeat_age`` s
    ago, and no task row left: what the watchdog finds after a crash."""
    turn = make_turn(conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    mark_running(turn, host=socket.gethostname(), pid=dead_pid(), heartbeat_age=heartbeat_age)
    DBTaskResult.objects.all().delete()
    return turn


@pytest.mark.subprocess
def test_a_dead_workers_job_is_re_enqueued_once_while_its_task_waits(world, laptop_conversation, make_turn):
    turn = left_by_a_dead_worker(make_turn, laptop_conversation, heartbeat_age=1)
    assert resume_stalled_turns() == [turn.pk]
    assert resume_stalled_turns() == []  # its task has not started yet
    assert DBTaskResult.objects.filter(status="READY").count() == 1


@pytest.mark.subprocess
def test_watchdogs_looking_at_once_enqueue_the_job_once(world, laptop_conversation, make_turn):
    turn = left_by_a_dead_worker(make_turn, laptop_conversation, heartbeat_age=1)
    outcomes = all_at_once(resume_stalled_turns, times=6)
    assert sorted(outcomes, key=len) == [[]] * 5 + [[turn.pk]], outcomes
    assert DBTaskResult.objects.filter(status="READY").count() == 1


def start_task(result: DBTaskResult, *, seconds_ago: float = 0) -> None:
    """What a worker does when it picks the task up, ``seconds_ago``: RUNNING, its start time."""
    result.claim("another-worker")
    DBTaskResult.objects.filter(pk=result.pk).update(started_at=timezone.now() - timedelta(seconds=seconds_ago))


@pytest.mark.subprocess
def test_a_takeover_between_its_task_starting_and_its_claim_is_not_enqueued_again(world, laptop_conversation,
                                                                                 make_turn):
    turn = left_by_a_dead_worker(make_turn, laptop_conversation, heartbeat_age=1)
    assert resume_stalled_turns() == [turn.pk]
    start_task(DBTaskResult.objects.get())  # a worker started it; the row still names the dead holder
    assert resume_stalled_turns() == []
    assert DBTaskResult.objects.count() == 1


@pytest.mark.subprocess
def test_a_takeover_whose_worker_died_before_its_claim_is_enqueued_again(world, laptop_conversation, make_turn):
    turn = left_by_a_dead_worker(make_turn, laptop_conversation, heartbeat_age=60)
    assert resume_stalled_turns() == [turn.pk]
    start_task(DBTaskResult.objects.get(), seconds_ago=40)  # started, then nothing for a heartbeat cutoff
    assert resume_stalled_turns() == [turn.pk]
    assert DBTaskResult.objects.filter(status="READY").count() == 1


@pytest.mark.subprocess
def test_the_dead_workers_own_running_task_does_not_hide_its_job(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    DBTaskResult.objects.all().delete()
    assert resume_stalled_turns(now=timezone.now() + timedelta(seconds=TURN_LEASE_SECONDS + 1)) == [turn.pk]
    start_task(DBTaskResult.objects.get(), seconds_ago=1)  # the task that claimed the job, then died with it
    mark_running(turn, host=socket.gethostname(), pid=dead_pid(), heartbeat_age=0)
    assert resume_stalled_turns() == [turn.pk]


@pytest.mark.subprocess
def test_a_job_claimed_without_a_task_is_still_taken_over(world, laptop_conversation, make_turn):
    """The bulk import claims jobs with no task of their own (``task_id`` empty)."""
    turn = left_by_a_dead_worker(make_turn, laptop_conversation, heartbeat_age=1)
    TurnExtraction.objects.filter(pk=turn.pk).update(task_id="")
    assert resume_stalled_turns() == [turn.pk]
