"""The navigation page as of a date in a real browser (issue 54): alice opens the graph as of three
days ago and the page draws exactly the notes of that day — the 2000 before her correction, not
the 3000 nor the note written since — under the "as of" chip; its link returns to now; a refused
date is said and nothing is drawn."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import sync_playwright

from tests.factories import PASSWORD
from tests.live_server import CHROMIUM, CHROMIUM_ARGS
from tests.navigation import test_as_of

pytestmark = pytest.mark.browser

history = test_as_of.history  # the fixture, shared (all database work before Playwright starts)


@pytest.fixture
def browser(history):
    assert os.path.exists(CHROMIUM), f"chromium is missing at {CHROMIUM}; run `make browser`"
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


LOADED = "() => window.legalmemNav && window.legalmemNav.loaded && window.legalmemNav.nodeIds().length > 0"


@pytest.mark.django_db(transaction=True)
def test_the_page_as_of_a_day_draws_that_days_graph_and_returns_to_now(live_server, history, browser):
    h = history
    page = browser.new_page(viewport={"width": 1400, "height": 900}, locale="zh-CN")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/?next=/navigation/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/navigation/")
    page.fill("#nav-as-of input[name=as_of]", h["day"])  # the date control, as a lawyer sets it
    page.click("#nav-as-of button[type=submit]")
    page.wait_for_url(f"{live_server.url}/navigation/?as_of={h['day']}")
    page.wait_for_function(LOADED)
    assert set(page.evaluate("window.legalmemNav.nodeIds()")) == test_as_of.ids(h["old"], h["refund"], h["law"], h["laptop"])
    assert page.inner_text("#nav-as-of-chip span") == f"截至 {h['day']}"
    assert page.input_value("#nav-as-of input[name=as_of]") == h["day"]

    page.click("#nav-now")
    page.wait_for_url(f"{live_server.url}/navigation/")
    page.wait_for_function(LOADED)
    assert set(page.evaluate("window.legalmemNav.nodeIds()")) == test_as_of.ids(
        h["refund"], h["law"], h["laptop"], h["new"], h["later"])
    assert page.locator("#nav-as-of-chip").count() == 0

    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url) if "/api/navigation/" in request.url else None)
    refused = page.goto(f"{live_server.url}/navigation/?as_of=2026-02-30")
    assert refused.status == 400
    assert "不是日期" in page.inner_text("#nav-as-of [role=alert]")
    page.wait_for_timeout(500)
    assert not page.evaluate("window.legalmemNav.loaded") and asked == []  # no graph of another moment
    assert not errors, errors
    page.close()
