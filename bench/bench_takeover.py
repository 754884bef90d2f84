"""How fast a turn job left ``running`` by a killed worker is taken over (docs/production.md
"After a crash"): a live, idle ``manage.py run_worker`` finds it through its watchdog, runs it, and
the job is done. Reports seconds from "the worker died" to "the job is done" for JOBS jobs, at the
heartbeat (``settings.TURN_HEARTBEAT_SECONDS``, 10 s); without it such a job
would wait for the lease (``TURN_LEASE_SECONDS``, 900 s).

    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage migrate -v 0
    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell -c "from bench.bench_takeover import main; main()"
"""
from __future__ import annotations

import os
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import timezone

from memory.models import Conversation, Firm, Membership, Role, TurnExtraction
from memory.services.conversations import save_message
from remember.turns import _get_or_create_turn
from infra import workers

BASE_DIR = Path(__file__).resolve().parents[1]
JOBS = int(os.environ.get("BENCH_JOBS", "5"))


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _abandoned_job(conversation: Conversation, index: int) -> TurnExtraction:
    """A turn whose worker was killed a moment ago: running, fresh heartbeat, pid gone."""
    user = save_message(conversation, "user", f"第{index}次：我在2024年3月5日花5999元买了一台笔记本电脑，两周后花屏。",
                        speaker=conversation.user.username)
    reply = save_message(conversation, "assistant", "您可以要求商家退货，请保存购买凭证。", speaker="assistant")
    turn, _ = _get_or_create_turn(user, reply, source_type="chat")
    now = timezone.now()
    TurnExtraction.objects.filter(pk=turn.pk).update(
        status=TurnExtraction.Status.RUNNING, attempts=1, started_at=now, heartbeat_at=now,
        worker_host=socket.gethostname(), worker_pid=_dead_pid(),
    )
    return turn


def main() -> None:
    firm, _ = Firm.objects.get_or_create(slug="bench-takeover", defaults={"name": "Bench takeover"})
    user, _ = get_user_model().objects.get_or_create(username="bench-takeover")
    Membership.objects.get_or_create(user=user, firm=firm, defaults={"role": Role.LAWYER})
    conversation = Conversation.objects.create(firm=firm, user=user, title="takeover bench")
    worker = subprocess.Popen([sys.executable, "manage.py", "run_worker", "--interval", "1"], cwd=BASE_DIR,
                              env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)
    try:
        time.sleep(15)  # the worker is up and idle
        seconds = []
        for index in range(JOBS):
            turn = _abandoned_job(conversation, index)
            died = time.monotonic()
            while TurnExtraction.objects.get(pk=turn.pk).status == TurnExtraction.Status.RUNNING or \
                    TurnExtraction.objects.get(pk=turn.pk).finished_at is None:
                if time.monotonic() - died > 300:
                    raise SystemExit(f"turn {turn.pk} was not taken over within 300 s")
                time.sleep(0.1)
            seconds.append(time.monotonic() - died)
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)
    print(f"takeover of a killed worker's job by an idle run_worker (TURN_HEARTBEAT_SECONDS="
          f"{settings.TURN_HEARTBEAT_SECONDS:g}, {JOBS} jobs): median {statistics.median(seconds):.1f} s, "
          f"max {max(seconds):.1f} s (the lease: {workers.TURN_LEASE_SECONDS:g} s); "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
