"""Websocket helpers (a communicator logged in with a real session cookie), and for the
browser tests a real Daphne server, a real chromium page and screenshots."""
from __future__ import annotations

import os

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from playwright.sync_api import sync_playwright

from legalmem_site.asgi import application
from tests.live_server import CHROMIUM, CHROMIUM_ARGS, running_server

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



@pytest.fixture
def server_env() -> dict[str, str]:
    """Extra environment of the Daphne server; a test module overrides it (e.g. a rate limit)."""
    return {}


@pytest.fixture
def asgi_server(transactional_db, fake_llm, server_env, tmp_path):
    """Daphne in a subprocess on the committed test data, streaming from the fake LLM."""
    with running_server(fake_llm, server_env, tmp_path / "daphne.log") as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def browser_locale() -> str:
    """The browser's language (Accept-Language decides the page's); overridden per test."""
    return "zh-CN"


@pytest.fixture
def browser_timezone() -> str | None:
    """The browser's own clock (None: the machine's); overridden where a test checks the page's one clock."""
    return None


@pytest.fixture
def page(browser_locale, browser_timezone):
    # Never skipped: without chromium this fails loudly (`make test` installs Debian's package).
    assert os.path.exists(CHROMIUM), f"chromium is missing at {CHROMIUM}; run `make browser`"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser.new_page(locale=browser_locale, viewport={"width": 1400, "height": 900},
                               timezone_id=browser_timezone)
        browser.close()

