"""A real Daphne server (HTTP + websockets) on the committed test data, for the bad-input and
fuzz tests; and logged-in session cookies for it."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings as django_settings

from bench.daphne import free_port, session_cookie
from legalmem_site.serving import daphne_command

BASE_DIR = Path(__file__).resolve().parents[2]


@dataclass
class LiveServer:
    host: str
    port: int
    log: Path  # the server's stderr: its logged errors and tracebacks

    def log_text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://{self.host}:{self.port}/ws/chat/"


def _test_database_url() -> str:
    """DATABASE_URL with the test database's name (pytest-django created it)."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + django_settings.DATABASES["default"]["NAME"]))


@pytest.fixture
def live_daphne_env() -> dict[str, str]:
    """Extra environment of the server; a test module overrides this fixture to change settings."""
    return {}


@pytest.fixture
def live_daphne(transactional_db, fake_llm, tmp_path, live_daphne_env):
    """Daphne started exactly as `make run` starts it (legalmem_site.serving), on the test
    database, answering from the fake LLM."""
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(),
        "LLM_BASE_URL": fake_llm.base_url,
        "LLM_MODEL": fake_llm.model,
        "LLM_API_KEY": "test-key",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CSRF_TRUSTED_ORIGINS": f"http://127.0.0.1:{port}",
        **live_daphne_env,
    }
    log = tmp_path / "daphne.log"
    stderr = log.open("wb")
    process = subprocess.Popen(
        daphne_command("127.0.0.1", port), cwd=BASE_DIR, env=env,
        stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("daphne did not start: " + log.read_text(errors="replace")[-2000:])
            time.sleep(0.2)
    yield LiveServer("127.0.0.1", port, log)
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=20)
    stderr.close()


@pytest.fixture
def cookie_of():
    """``cookie_of(user)``: a Cookie header value logging the user in."""
    return session_cookie
