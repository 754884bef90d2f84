"""The real page in a real browser (Debian chromium through Playwright, against a live server):
log in, open the navigation page, click a node, and the highlighted path is the API's trace."""
from __future__ import annotations

import os

import pytest
from playwright.sync_api import sync_playwright

from memory.models import MemoryScope
from navigation import cache
from tests.factories import PASSWORD
from tests.navigation.corpus import sentences

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--disable-sync"]


@pytest.fixture
def stored(world) -> set[str]:
    """60 notes over both matters and the firm-wide layer; returns the walled (deposit) ids.

    All database work happens here, before Playwright starts its event loop in this thread."""
    cache.clear()
    for index, (text, _event, keywords) in enumerate(sentences(60, seed=11)):
        matter = world.matter_laptop if index % 3 == 0 else world.matter_deposit if index % 3 == 1 else None
        world.note(text, matter=matter, scope=MemoryScope.CASE if matter else MemoryScope.CROSS_CASE,
                   keywords=keywords)
    return {str(pk) for pk in world.matter_deposit.notes.values_list("pk", flat=True)}


@pytest.fixture
def browser(stored):
    # Never skipped: without chromium this fails loudly (`make test` installs Debian's package).
    assert os.path.exists(CHROMIUM), f"chromium is missing at {CHROMIUM}; run `make browser`"
    with sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            yield instance
        finally:
            instance.close()


@pytest.mark.django_db(transaction=True)
def test_clicking_a_node_highlights_the_api_trace(live_server, stored, browser):
    page = browser.new_page(viewport={"width": 1400, "height": 900}, locale="zh-CN")
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{live_server.url}/accounts/login/?next=/navigation/")
    page.fill("input[name=username]", "bob")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/navigation/")
    page.wait_for_function("window.legalmemNav && window.legalmemNav.loaded && window.legalmemNav.nodeIds().length > 0")
    assert "记忆导航图" in page.content()

    ids = page.evaluate("window.legalmemNav.nodeIds()")
    assert ids and not stored & set(ids), "bob's page must not hold the walled matter's notes"
    graph = page.evaluate("fetch('/api/navigation/graph').then(r => r.json())")
    # The node to click: an L0-only note (the route then crosses every level).
    target = next(n for n in graph["nodes"] if n["level"] == 0 and n["id"] != graph["entry"])
    position = page.evaluate("id => window.legalmemNav.nodeClientPosition(id)", target["id"])
    width_before = page.evaluate("document.getElementById('nav-stage').getBoundingClientRect().width")
    page.mouse.click(position["x"], position["y"])
    page.wait_for_function("window.legalmemNav.highlightedPath().length > 0", timeout=30_000)
    page.wait_for_selector("#trace-path li[data-source]")

    api = page.evaluate(f"fetch('/api/navigation/trace/{target['id']}?k=10').then(r => r.json())")
    expected = [{"source": s["source"], "target": s["target"], "level": s["level"]} for s in api["trace"]["path"]]
    highlighted = page.evaluate("window.legalmemNav.highlightedPath()")
    assert highlighted == expected
    listed = page.eval_on_selector_all(
        "#trace-path li[data-source]",
        "items => items.map(li => ({source: li.dataset.source, target: li.dataset.target, level: Number(li.dataset.level)}))",
    )
    assert listed == expected
    assert expected[-1]["target"] == target["id"]
    assert page.inner_text("#d-content") == api["note"]["content"]
    assert page.inner_text("#d-level") == f"L{api['note']['level']}"
    # The detail panel moved the graph aside instead of covering it.
    page.wait_for_function(f"document.getElementById('nav-stage').getBoundingClientRect().width < {width_before} - 100")
    detail = page.evaluate("document.getElementById('nav-detail').getBoundingClientRect().left")
    stage_right = page.evaluate("document.getElementById('nav-stage').getBoundingClientRect().right")
    assert stage_right <= detail + 1
    assert not errors, errors
    page.close()
