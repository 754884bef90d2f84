"""A real Daphne server for the tests that need one (browser, fuzz, production CSP): started
exactly as `make run` starts it (``legalmem_site.serving``), on the test database, answering
from the fake LLM; and chromium's location and flags for the browser tests."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from django.conf import settings

from legalmem_site.serving import free_port, start_daphne, stop_daphne

CHROMIUM = "/usr/bin/chromium"  # Debian's package (`make browser`); Playwright's download does not work offline
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


def test_database_url() -> str:
    """DATABASE_URL with the test database's name (pytest-django created it)."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + settings.DATABASES["default"]["NAME"]))


@contextmanager
def running_server(fake_llm, extra_env: dict[str, str], log: Path, *,
                base_env: dict[str, str] | None = None) -> Iterator[int]:
    """Yield the port of a Daphne serving the product from the test database and the fake LLM;
    ``extra_env`` wins over the defaults, the server's stderr goes to ``log``."""
    port = free_port()
    env = {
        **(os.environ if base_env is None else base_env),
        "DATABASE_URL": test_database_url(),
        "LLM_BASE_URL": fake_llm.base_url,
        "LLM_MODEL": fake_llm.model,
        "LLM_API_KEY": "test-key",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CSRF_TRUSTED_ORIGINS": f"http://127.0.0.1:{port}",
        **extra_env,
    }
    with log.open("wb") as stderr:
        try:
            process = start_daphne(port, env, stderr=stderr)
        except RuntimeError as exc:
            raise AssertionError(f"{exc}: {log.read_text(errors='replace')[-2000:]}") from None
        try:
            yield port
        finally:
            stop_daphne(process)


test_database_url.__test__ = False  # a helper, not a test (its name starts with "test")
