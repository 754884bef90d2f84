"""The chat page in a real browser: Debian's chromium driven by Playwright, against Daphne
(HTTP + websockets) serving the test database and the fake OpenAI-compatible LLM.
Log in, ask, watch the tokens stream, see the recalled memories, press Stop, reload."""
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
from django.conf import settings as django_settings
from playwright.sync_api import expect, sync_playwright

from tests.factories import PASSWORD
from tests.fake_llm.server import text_reply

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
    return urlunsplit(parts._replace(path="/" + django_settings.DATABASES["default"]["NAME"]))


@pytest.fixture
def asgi_server(transactional_db, fake_llm):
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
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "legalmem_site.asgi:application"],
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
def page():
    # Never skipped: without chromium this fails loudly (`make test` installs Debian's package).
    assert os.path.exists(CHROMIUM), f"chromium is missing at {CHROMIUM}; run `make browser`"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser.new_page(locale="zh-CN")
        browser.close()


@pytest.fixture
def laptop_note(world):
    """Created before the browser starts: Playwright's sync API runs an event loop in this thread."""
    return world.note("笔记本电脑在购买后约两周出现大面积花屏。", matter=world.matter_laptop)


def test_ask_watch_tokens_stream_see_memories_press_stop_and_reload(world, laptop_note, asgi_server, fake_llm, page):
    note = laptop_note
    long_answer = "结论：可以要求退货。" + "依据产品质量法分析" * 60
    fake_llm.script(text_reply(long_answer, token_delay=0.05))

    page.goto(f"{asgi_server}/accounts/login/?next=/chat/")
    page.fill("input[name=username]", "bob")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{asgi_server}/chat/")
    expect(page.locator("#connection-status")).to_contain_text("llm:")

    page.select_option("#matter", str(world.matter_laptop.pk))
    page.fill("#question", "电脑花屏了，商家不给退怎么办？")
    page.click("#send")

    recalled = page.locator(f"#recalled .note[data-note-id='{note.pk}']")
    expect(recalled).to_contain_text("大面积花屏")
    expect(page.locator("#recalled .badge.case")).to_be_visible()
    answer = page.locator("#messages li.assistant .body").last
    expect(answer).to_contain_text("结论")
    first = len(answer.inner_text())
    page.wait_for_timeout(400)
    assert len(answer.inner_text()) > first  # still streaming, token by token

    page.click("#stop")
    expect(page.locator("#messages li.assistant.cancelled")).to_have_count(1)
    stopped_text = answer.inner_text()
    assert 0 < len(stopped_text) < len(long_answer)
    expect(page.locator("#stop")).to_be_disabled()

    page.reload()
    page.click("#conversation-list a >> nth=0")
    expect(page.locator("#messages li.user .body")).to_have_text(["电脑花屏了，商家不给退怎么办？"])
    expect(page.locator("#messages li.assistant.cancelled .body")).to_have_text([stopped_text])
