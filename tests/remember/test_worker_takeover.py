"""A turn left ``running`` by a killed worker is taken over at once — by the start-up resume step
and by a live, idle worker — while a job whose worker still beats its heartbeat is left alone
(infra/workers.py, docs/production.md "After a crash")."""
from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connection
from django.utils import timezone, translation
from django_tasks import TaskResultStatus
from django_tasks_db.models import DBTaskResult

from memory.models import Note, TurnExtraction
from remember.turns import resume_stalled_turns
from remember.services.turn_jobs import heartbeat
from remember.apply import TurnTakenOver
from remember.services.turn_jobs import do_claim_turn
from remember.turns import apply_turn, extract_items
from tests.live_server import test_database_url
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER
from tests.task_worker import run_worker_once
from infra import workers
from remember import turns
from tests.overrides import overrides_env

BASE_DIR = Path(__file__).resolve().parents[2]


def dead_pid() -> int:
    """The pid of a process that has exited (and was reaped)."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def mark_running(turn: TurnExtraction, *, host: str, pid: int, heartbeat_age: float) -> None:
    """What a worker leaves behind when it claimed the job a moment ago."""
    now = timezone.now()
    TurnExtraction.objects.filter(pk=turn.pk).update(
        status=TurnExtraction.Status.RUNNING, attempts=1, started_at=now - timedelta(seconds=heartbeat_age),
        heartbeat_at=now - timedelta(seconds=heartbeat_age), worker_host=host, worker_pid=pid,
    )


def resume_step() -> str:
    """What `make run` runs before starting the worker."""
    out = io.StringIO()
    with translation.override("en"):  # the assertions read its English output
        call_command("resume_turn_extractions", stdout=out)
    return out.getvalue()


@pytest.mark.subprocess
def test_a_job_whose_worker_process_is_gone_is_re_enqueued_at_start_up_and_run(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    mark_running(turn, host=socket.gethostname(), pid=dead_pid(), heartbeat_age=1)  # fresh heartbeat, dead pid
    assert f"re-enqueued 1 turn extraction job(s): [{turn.pk}]" in resume_step()
    result = run_worker_once()
    assert result.status == "SUCCESSFUL"
    turn.refresh_from_db()
    assert (turn.status, turn.attempts, turn.worker_pid) == ("done", 2, os.getpid())


def test_a_job_whose_heartbeat_stopped_on_another_host_is_taken_over(world, laptop_conversation, make_turn, settings):
    settings.TURN_HEARTBEAT_SECONDS = 10
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    mark_running(turn, host="other-host", pid=1234, heartbeat_age=31)  # three beats missed, far from the lease
    assert resume_stalled_turns() == [turn.pk]
    assert do_claim_turn(turn.pk) is not None


def test_a_job_with_a_live_worker_is_not_stolen(world, laptop_conversation, make_turn, settings):
    settings.TURN_HEARTBEAT_SECONDS = 10
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    mark_running(turn, host=socket.gethostname(), pid=os.getpid(), heartbeat_age=5)  # this process is alive
    assert "re-enqueued 0" in resume_step()
    assert do_claim_turn(turn.pk) is None
    mark_running(turn, host="other-host", pid=1234, heartbeat_age=5)  # another host, beating
    assert resume_stalled_turns() == []
    assert do_claim_turn(turn.pk) is None
    turn.refresh_from_db()
    assert (turn.status, turn.attempts, turn.worker_host) == ("running", 1, "other-host")


def test_the_heartbeat_advances_while_the_job_runs(transactional_db, world, laptop_conversation, make_turn, settings):
    settings.TURN_HEARTBEAT_SECONDS = 0.2
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    claimed = do_claim_turn(turn.pk)
    with heartbeat(turn.pk):
        time.sleep(1.0)
    turn.refresh_from_db()
    assert turn.heartbeat_at > claimed.heartbeat_at
    assert resume_stalled_turns() == []


@pytest.fixture
def live_worker(transactional_db):
    """`manage.py run_worker` (what `make run` starts) in a subprocess on the test database."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("LLM_")}
    env.update(DATABASE_URL=test_database_url(), PYTHONUNBUFFERED="1",
               **overrides_env(settings={"TURN_HEARTBEAT_SECONDS": 0.5}))
    process = subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", "--interval", "0.2"],
        cwd=BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    yield process
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


@pytest.mark.subprocess
def test_an_idle_live_worker_takes_over_a_job_of_a_killed_worker(live_worker, world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    mark_running(turn, host=socket.gethostname(), pid=dead_pid(), heartbeat_age=0)
    deadline = time.monotonic() + 120  # a generous bound for a loaded machine: the lease is 900 s
    while time.monotonic() < deadline:
        turn.refresh_from_db()
        if turn.status == "done" or live_worker.poll() is not None:
            break
        time.sleep(0.5)
    assert turn.status == "done", f"worker exit {live_worker.poll()}; turn {turn.status}"
    assert turn.attempts == 2
    assert turn.worker_pid != os.getpid()


def test_an_overdue_job_whose_task_still_waits_in_the_queue_is_not_enqueued_again(
    world, laptop_conversation, make_turn, settings, django_capture_on_commit_callbacks
):
    from django_tasks_db.models import DBTaskResult

    with django_capture_on_commit_callbacks(execute=True):
        turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    later = timezone.now() + timedelta(seconds=workers.TURN_LEASE_SECONDS + 5)
    assert resume_stalled_turns(now=later) == []  # a long queue, not a lost task: no duplicate every round
    assert DBTaskResult.objects.count() == 1
    DBTaskResult.objects.update(status="FAILED")  # the task is gone without running the job
    assert resume_stalled_turns(now=later) == [turn.pk]


def test_a_frozen_worker_that_wakes_after_a_takeover_writes_nothing(world, laptop_conversation, make_turn, settings):
    """A worker frozen past its heartbeat (SIGSTOP, a stalled VM) loses the job to another worker;
    when it wakes it must not write the turn's notes a second time nor finish the row again."""
    settings.TURN_HEARTBEAT_SECONDS = 10
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    frozen = do_claim_turn(turn.pk)
    assert frozen is not None
    assert extract_items(frozen)  # it extracted, then froze
    TurnExtraction.objects.filter(pk=turn.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=31))
    taker = do_claim_turn(turn.pk)
    assert taker is not None
    assert taker.attempts == frozen.attempts + 1

    with pytest.raises(TurnTakenOver):  # it wakes before the new holder wrote anything
        apply_turn(frozen)
    assert not Note.objects.filter(firm=world.firm_a, source_id=f"turn:{turn.pk}").exists()

    assert extract_items(taker)
    apply_turn(taker)
    written = sorted(Note.objects.filter(firm=world.firm_a, source_id=f"turn:{turn.pk}").values_list("pk", flat=True))
    assert written
    with pytest.raises(TurnTakenOver):  # and again after the new holder finished
        apply_turn(frozen)
    turn.refresh_from_db()
    assert (turn.status, turn.attempts) == ("done", taker.attempts)
    assert sorted(Note.objects.filter(firm=world.firm_a, source_id=f"turn:{turn.pk}").values_list("pk", flat=True)) == written
    assert not Note.objects.filter(firm=world.firm_b).exists()  # charlie's firm untouched


def test_a_worker_frozen_inside_its_watchdog_round_does_not_stop_the_takeover(
        transactional_db, world, laptop_conversation, make_turn, settings, monkeypatch):
    """SIGSTOP can land while a worker's watchdog holds the lock every watchdog takes: PostgreSQL
    ends the frozen session after ``settings.LOCK_FROZEN_HOLDER_SECONDS`` and the live worker goes on."""
    settings.TURN_HEARTBEAT_SECONDS = 10
    settings.LOCK_FROZEN_HOLDER_SECONDS = 1.0
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    mark_running(turn, host="other-host", pid=1234, heartbeat_age=31)
    turn.refresh_from_db()
    DBTaskResult.objects.filter(id=turn.task_id).update(status=TaskResultStatus.RUNNING)  # the stopped worker's
    inside, thaw = threading.Event(), threading.Event()
    enqueue = turns._enqueue_task

    def enqueue_unless_frozen(turn_id, *args):
        if threading.current_thread().name == "frozen-worker":
            inside.set()
            thaw.wait(30)  # stopped between two statements of its round, the lock held
            return
        enqueue(turn_id, *args)

    monkeypatch.setattr(turns, "_enqueue_task", enqueue_unless_frozen)
    errors: list[Exception] = []

    def frozen_round() -> None:
        try:
            resume_stalled_turns()
        except Exception as exc:  # noqa: BLE001 - what the frozen worker meets when it wakes
            errors.append(exc)
        finally:
            connection.close()

    frozen = threading.Thread(target=frozen_round, name="frozen-worker")
    frozen.start()
    assert inside.wait(10), errors
    started = time.monotonic()
    assert resume_stalled_turns() == [turn.pk]  # waited for the frozen holder's session to end
    waited = time.monotonic() - started
    thaw.set()
    frozen.join(10)
    assert 0.5 < waited < 20
    assert len(errors) == 1 and isinstance(errors[0], DatabaseError), errors  # its session was ended, not ours
    assert "idle-in-transaction timeout" in str(errors[0])
    assert do_claim_turn(turn.pk) is not None
