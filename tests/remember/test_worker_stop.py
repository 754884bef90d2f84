"""A worker told to stop closes the LLM request it is collecting at once, so the server stops
generating it, and the turn waits for the next worker without losing an attempt
(infra.llm.stop_generations, memory/management/commands/run_worker.py)."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memory.models import TurnExtraction
from tests.fake_llm.replies import text_reply
from tests.live_server import test_database_url
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER

BASE_DIR = Path(__file__).resolve().parents[2]
#: A JSON answer that would take the fake server about 200 s to stream, one token every 0.1 s.
ENDLESS_ANSWER = json.dumps({"knowledge": [{"content": "电脑花屏" * 10, "category": "事实"}] * 60},
                            ensure_ascii=False)


def wait_until(condition, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    raise AssertionError(f"{what}: not within {timeout} s")


@pytest.mark.subprocess
def test_a_stopped_worker_closes_the_generation_and_keeps_the_attempt(
    transactional_db, world, laptop_conversation, make_turn, fake_llm
):
    fake_llm.script(text_reply(ENDLESS_ANSWER, token_delay=0.1))
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY, run=False)
    env = {key: value for key, value in os.environ.items() if not key.startswith("LLM_")}
    env.update(DATABASE_URL=test_database_url(), PYTHONUNBUFFERED="1", LLM_BASE_URL=fake_llm.base_url,
               LLM_MODEL=fake_llm.model, LLM_TIMEOUT_SECONDS="60", LLM_STALL_SECONDS="30")
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "run_worker", "--interval", "0.2"],
        cwd=BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    try:
        # A generous bound: the worker loads the embedding model and indexes the turn first.
        wait_until(lambda: any(r.chunks_sent >= 5 for r in fake_llm.chat_requests()) or worker.poll() is not None,
                   180, "the extraction request streaming")
        assert worker.poll() is None, worker.stdout.read()
        (generating,) = [r for r in fake_llm.chat_requests() if r.chunks_sent >= 5]
        worker.send_signal(signal.SIGTERM)
        stopped_at = time.monotonic()
        wait_until(lambda: generating.disconnected, 10, "the stream closed by the stopping worker")
        assert generating.disconnected_at - stopped_at < 10
        assert generating.chunks_sent < len(ENDLESS_ANSWER) // 2  # it did not run to its end
        assert worker.wait(timeout=60) == 0
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
    turn.refresh_from_db()
    assert turn.status == TurnExtraction.Status.PENDING
    assert turn.attempts == 0  # stopping is not the job's failure
    assert "stopping" in turn.last_error
    assert len(fake_llm.chat_requests()) == 1  # nothing asked again by the stopping worker
