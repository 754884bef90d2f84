"""Websocket helpers (a communicator logged in with a real session cookie), and for the
browser tests a real Daphne server, a real chromium page and screenshots."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from playwright.sync_api import sync_playwright

from legalmem_site.asgi import application
from legalmem_site.serving import daphne_command

HOST = (b"host", b"127.0.0.1:8000")
ORIGIN = (b"origin", b"http://127.0.0.1:8000")


def _session_cookie(user) -> tuple[bytes, bytes]:
    client = Client()
    client.force_login(user)
    cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
    return (b"cookie", f"{settings.SESSION_COOKIE_NAME}={cookie}".encode())


async def open_socket(user=None, *, origin: tuple[bytes, bytes] = ORIGIN) -> WebsocketCommunicator:
    headers = [origin, HOST]
    if user is not None:
        headers.append(await sync_to_async(_session_cookie)(user))
    return WebsocketCommunicator(application, "/ws/chat/", headers=headers)


# --- a real server and a real browser (tests/chat/test_browser*.py) -------------------------

BASE_DIR = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--no-first-run", "--disable-sync"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _test_database_url() -> str:
    """DATABASE_URL with the test database's name (pytest-django created it)."""
    parts = urlsplit(os.environ["DATABASE_URL"])
    return urlunsplit(parts._replace(path="/" + settings.DATABASES["default"]["NAME"]))


@pytest.fixture
def server_env() -> dict[str, str]:
    """Extra environment of the Daphne server; a test module overrides it (e.g. a rate limit)."""
    return {}


@pytest.fixture
def asgi_server(transactional_db, fake_llm, server_env):
    """Daphne in a subprocess on the committed test data, streaming from the fake LLM."""
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": _test_database_url(),
        "LLM_BASE_URL": fake_llm.base_url,
        "LLM_MODEL": fake_llm.model,
        "LLM_API_KEY": "test-key",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "CSRF_TRUSTED_ORIGINS": f"http://127.0.0.1:{port}",
        **server_env,
    }
    process = subprocess.Popen(
        daphne_command("127.0.0.1", port),
        cwd=BASE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("daphne did not start: " + process.stderr.read().decode()[-2000:])
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}"
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=20)


@pytest.fixture
def browser_locale() -> str:
    """The browser's language (Accept-Language decides the page's); overridden per test."""
    return "zh-CN"


@pytest.fixture
def page(browser_locale):
    # Never skipped: without chromium this fails loudly (`make test` installs Debian's package).
    assert os.path.exists(CHROMIUM), f"chromium is missing at {CHROMIUM}; run `make browser`"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser.new_page(locale=browser_locale, viewport={"width": 1400, "height": 900})
        browser.close()

