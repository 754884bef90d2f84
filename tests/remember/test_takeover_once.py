"""A job left by a dead worker is re-enqueued once, however many watchdogs see it: not again
while its new task waits, and not twice by workers looking at the same moment
(remember/turns.py ``resume_stalled_turns``; the scale-out test kills workers for real)."""
from __future__ import annotations

import socket

import pytest
from django_tasks_db.models import DBTaskResult

from remember.turns import resume_stalled_turns
from tests.concurrency import all_at_once
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER
from tests.remember.test_worker_takeover import dead_pid, mark_running

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.mark.subprocess
def test_a_dead_workers_job_is_re_enqueued_once_while_its_task_waits(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    mark_running(turn, host=socket.gethostname(), pid=dead_pid(), heartbeat_age=1)
    DBTaskResult.objects.all().delete()
    assert resume_stalled_turns() == [turn.pk]
    assert resume_stalled_turns() == []  # its task has not started yet
    assert DBTaskResult.objects.filter(status="READY").count() == 1


@pytest.mark.subprocess
def test_watchdogs_looking_at_once_enqueue_the_job_once(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    mark_running(turn, host=socket.gethostname(), pid=dead_pid(), heartbeat_age=1)
    DBTaskResult.objects.all().delete()
    outcomes = all_at_once(resume_stalled_turns, times=6)
    assert sorted(outcomes, key=len) == [[]] * 5 + [[turn.pk]], outcomes
    assert DBTaskResult.objects.filter(status="READY").count() == 1
