"""`make run` end to end: a fresh data folder gets an embedded PostgreSQL, migrations, demo users,
the demo story (the shipped script when the configured LLM cannot write it) and a server on HTTP;
a second launch is refused; Ctrl-C stops everything; data survives a restart."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from tests.fake_llm.replies import error_reply
from tests.fake_llm.server import FakeLLMServer
from tests.overrides import overrides_env

pytestmark = pytest.mark.subprocess

BASE_DIR = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch(data_dir: Path, port: int, **extra_env: str) -> subprocess.Popen[str]:
    env = {key: value for key, value in os.environ.items() if key not in {"DATABASE_URL", "SECRET_KEY"}}
    env.update(LEGALMEM_DATA_DIR=str(data_dir), PORT=str(port), PYTHONUNBUFFERED="1", **extra_env)
    return subprocess.Popen(
        [sys.executable, "-m", "legalmem_site.launcher", "run"],
        cwd=BASE_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True,
    )


def wait_for_line(process: subprocess.Popen[str], needle: str, timeout: float = 180) -> list[str]:
    lines: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            if process.poll() is not None:
                break
            continue
        lines.append(line.rstrip())
        if needle in line:
            return lines
    raise AssertionError(f"never saw {needle!r}; output:\n" + "\n".join(lines))


def postgres_processes(pgdata: Path) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(attrs=["name", "cmdline"]):
        if proc.info["name"] == "postgres" and str(pgdata) in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def stop(process: subprocess.Popen[str]) -> int:
    os.killpg(process.pid, signal.SIGINT)  # what Ctrl-C in the terminal does
    return process.wait(timeout=60)


def test_make_run_serves_refuses_a_second_run_stops_cleanly_and_keeps_data(tmp_path, fake_llm: FakeLLMServer):
    data_dir = tmp_path / "var"
    port = free_port()
    # The configured LLM fails every request: the first start seeds the shipped story instead of stopping.
    fake_llm.set_default(error_reply(500, "the model crashed"))
    first = launch(data_dir, port, LLM_BASE_URL=fake_llm.base_url, LLM_MODEL=fake_llm.model,
                   **overrides_env(settings={"LLM_MAX_RETRIES": 0}))
    try:
        output = wait_for_line(first, "Ctrl-C stops", timeout=600)
        assert any("示例律所已创建" in line for line in output)  # "demo firm created": commands speak zh-hans
        fallback = [line for line in output if line.startswith("[legalmem] the LLM could not write the demo story")]
        assert len(fallback) == 1, output
        assert "HTTP 500" in fallback[0], output
        assert fallback[0].endswith("seeding the shipped script instead")
        assert any("turn(s) over 7 event(s)" in line and "'offline'" in line for line in output), output
        # chunk 1 asked once (an unavailable server is not asked again); the story's extraction ran offline
        story_requests = [r for r in fake_llm.chat_requests() if "「" in r.user_content]
        assert len(story_requests) == len(fake_llm.chat_requests()) == 1
        # A new data folder gets the server settings once (restart), then serves with them.
        assert any("restarted to apply shared_buffers" in line for line in output), output
        assert any("shared_buffers 2GB" in line for line in output), output
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=10) as response:
            assert response.status == 200
            assert "LegalMem" in response.read().decode()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/static/css/app.css", timeout=10) as response:
            assert response.status == 200

        second = subprocess.run(
            [sys.executable, "-m", "legalmem_site.launcher", "run"], cwd=BASE_DIR, capture_output=True, text=True,
            env={**{k: v for k, v in os.environ.items() if k != "DATABASE_URL"}, "LEGALMEM_DATA_DIR": str(data_dir),
                 "PORT": str(free_port())}, timeout=60,
        )
        assert second.returncode == 2
        assert "already running" in second.stderr
        assert str(data_dir) in second.stderr
    finally:
        code = stop(first)
    assert code == 0
    assert postgres_processes(data_dir / "pgdata") == []

    again = launch(data_dir, port)
    try:
        output = wait_for_line(again, "Ctrl-C stops")
        assert any("示例律所已存在" in line for line in output)  # "demo firm already present"
        assert any("already has story notes; nothing to do" in line for line in output), output
        assert not any("restarted to apply" in line for line in output), output
        assert any("shared_buffers 2GB" in line for line in output), output
    finally:
        assert stop(again) == 0
    assert postgres_processes(data_dir / "pgdata") == []


def test_a_retired_server_setting_is_one_line_naming_where_it_lives_and_starts_nothing(tmp_path):
    """The embedded server's settings are constants of the launcher (EMBEDDED_SERVER_SETTINGS)."""
    data_dir = tmp_path / "var"
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(LEGALMEM_DATA_DIR=str(data_dir), LEGALMEM_PG_SHARED_BUFFERS="lots")
    result = subprocess.run(
        [sys.executable, "-m", "legalmem_site.launcher", "manage", "check"],
        cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().startswith(
        "[legalmem] error: LEGALMEM_PG_SHARED_BUFFERS is no longer read from the environment: it is a constant "
        "in legalmem_site/launcher.py"), result.stderr
    assert postgres_processes(data_dir / "pgdata") == []


def test_a_demo_story_setting_that_does_not_parse_is_one_line_naming_the_variable(tmp_path):
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(LEGALMEM_DATA_DIR=str(tmp_path / "var"), LEGALMEM_DEMO_STORY="sometimes")
    result = subprocess.run([sys.executable, "-m", "legalmem_site.launcher", "run"],
                            cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip() == (
        "[legalmem] error: LEGALMEM_DEMO_STORY must be one of auto, llm, offline, skip, got 'sometimes'")
    env.update(LEGALMEM_DEMO_STORY="auto", LEGALMEM_DEMO_STORY_BUDGET_SECONDS="ten minutes")  # retired
    result = subprocess.run([sys.executable, "-m", "legalmem_site.launcher", "run"],
                            cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().startswith(
        "[legalmem] error: LEGALMEM_DEMO_STORY_BUDGET_SECONDS is no longer read from the environment: it is a "
        "constant in legalmem_site/launcher.py"), result.stderr
    assert postgres_processes(tmp_path / "var" / "pgdata") == []


def test_after_a_kill_9_of_the_launcher_the_next_clean_stop_still_stops_the_database(tmp_path):
    """The launcher is killed with SIGKILL (no atexit, its pid stays in the embedded server's
    handle list): its worker and server die with it, the next start adopts the PostgreSQL left
    running, and the next Ctrl-C stops it."""
    data_dir, pgdata = tmp_path / "var", tmp_path / "var" / "pgdata"
    first = launch(data_dir, free_port(), LEGALMEM_DEMO_STORY="skip")
    wait_for_line(first, "Ctrl-C stops", timeout=600)
    children = psutil.Process(first.pid).children()
    assert {"worker", "server"} <= {
        "worker" if "run_worker" in " ".join(c.cmdline()) else "server" if "daphne" in " ".join(c.cmdline()) else ""
        for c in children
    }
    os.kill(first.pid, signal.SIGKILL)
    first.wait(timeout=30)
    gone, alive = psutil.wait_procs(children, timeout=60)
    assert alive == [], f"children outlived the launcher: {alive}"
    assert postgres_processes(pgdata), "the killed launcher's PostgreSQL should still be running"
    assert str(first.pid) in (pgdata / ".handle_pids.json").read_text()

    again = launch(data_dir, free_port(), LEGALMEM_DEMO_STORY="skip")
    try:
        output = wait_for_line(again, "Ctrl-C stops", timeout=600)
        assert any("adopting the embedded PostgreSQL" in line and str(first.pid) in line for line in output), output
    finally:
        assert stop(again) == 0
    assert postgres_processes(pgdata) == []
    assert (pgdata / ".handle_pids.json").read_text().strip() == "[]"
