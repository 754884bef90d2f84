"""A real Daphne server (HTTP + websockets) on the committed test data, for the bad-input and
fuzz tests; and logged-in session cookies for it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from bench.daphne import session_cookie
from tests.live_server import running_server



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


@pytest.fixture
def live_daphne_env() -> dict[str, str]:
    """Extra environment of the server; a test module overrides this fixture to change settings."""
    return {}


@pytest.fixture
def live_daphne(transactional_db, fake_llm, tmp_path, live_daphne_env):
    """Daphne started exactly as `make run` starts it (legalmem_site.serving), on the test
    database, answering from the fake LLM."""
    log = tmp_path / "daphne.log"
    with running_server(fake_llm, live_daphne_env, log) as port:
        yield LiveServer("127.0.0.1", port, log)


@pytest.fixture
def cookie_of():
    """``cookie_of(user)``: a Cookie header value logging the user in."""
    return session_cookie
