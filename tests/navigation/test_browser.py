"""The real page in a real browser (Debian chromium through Playwright, against a live server):
log in, open the navigation page, click a node, and the highlighted path is the API's trace."""
from __future__ import annotations

import os
import re

import pytest
from playwright.sync_api import sync_playwright

from memory.models import MemoryScope
from navigation import cache
from tests.factories import PASSWORD
from tests.live_server import CHROMIUM, CHROMIUM_ARGS
from tests.navigation.corpus import sentences
from tests.screenshots import save_screenshot

pytestmark = pytest.mark.browser


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
        instance = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield instance
        finally:
            instance.close()


def open_and_click_a_node(browser, server: str, locale: str):
    """Log bob in, open the navigation page and click an L0-only note (the route then crosses
    every level); returns the page, the clicked node, the page errors and the graph's width
    before the click (the detail panel then moves the graph aside)."""
    page = browser.new_page(viewport={"width": 1400, "height": 900}, locale=locale)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(f"{server}/accounts/login/?next=/navigation/")
    page.fill("input[name=username]", "bob")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server}/navigation/")
    page.wait_for_function("() => window.legalmemNav && window.legalmemNav.loaded && window.legalmemNav.nodeIds().length > 0")
    graph = page.evaluate("fetch('/api/navigation/graph').then(r => r.json())")
    target = next(n for n in graph["nodes"] if n["level"] == 0 and n["id"] != graph["entry"])
    position = page.evaluate("id => window.legalmemNav.nodeClientPosition(id)", target["id"])
    width_before = page.evaluate("document.getElementById('nav-stage').getBoundingClientRect().width")
    page.mouse.click(position["x"], position["y"])
    page.wait_for_function("() => window.legalmemNav.highlightedPath().length > 0", timeout=30_000)
    page.wait_for_selector("#trace-path li[data-source]")
    return page, target, errors, width_before


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(
    "locale, category, source, layer, steps, terms, levels",
    [("zh-CN", "事实", "手动录入", "案件事实", ("逐步接近", "附近查找"), ("贪心下降", "束搜索"), ("全部笔记", "概览")),
     ("en-US", "Fact", "Entered by hand", "Case facts", ("Getting close", "Searching nearby"),
      ("Greedy descent", "Beam search"), ("all notes", "overview"))],
)
def test_labels_are_translated(live_server, stored, browser, locale, category, source, layer, steps, terms, levels):
    page, _target, errors, _width = open_and_click_a_node(browser, live_server.url, locale)
    assert page.inner_text("#d-category") == category
    assert page.inner_text("#d-source") == source
    legend = page.inner_text("#nav-legend")
    assert layer in legend
    assert "user_profile" not in legend
    assert "历史案件 case facts" not in legend
    assert layer in page.inner_text("#nav-filters select[name=scope]")
    # each step in plain words, once ("概览 1 · 逐步接近 → "); the technical terms one hover away
    level = rf"({levels[0]}|{levels[1]} \d)"
    for text, title in page.eval_on_selector_all("#trace-path li[data-source] .lvl",
                                                 "items => items.map(i => [i.textContent, i.title])"):
        assert re.fullmatch(rf"{level} · ({steps[0]}|{steps[1]}) → ", text), text
        assert re.fullmatch(rf"L\d · ({terms[0]}|{terms[1]})", title), title
    assert not re.search(r"\bL\d", page.inner_text("#nav-shell"))
    save_screenshot(page, "navigation" if locale == "zh-CN" else "navigation-en")
    assert not errors, errors
    page.close()


@pytest.mark.django_db(transaction=True)
def test_clicking_a_node_highlights_the_api_trace(live_server, stored, browser):
    page, target, errors, width_before = open_and_click_a_node(browser, live_server.url, "zh-CN")
    assert "记忆导航图" in page.content()
    ids = page.evaluate("window.legalmemNav.nodeIds()")
    assert ids, "bob's page must not hold the walled matter's notes"
    assert not stored & set(ids), "bob's page must not hold the walled matter's notes"

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
    assert page.get_attribute("#d-level", "title") == f"L{api['note']['level']}"
    # The detail panel moved the graph aside instead of covering it.
    page.wait_for_function(f"() => document.getElementById('nav-stage').getBoundingClientRect().width < {width_before} - 100")
    detail = page.evaluate("document.getElementById('nav-detail').getBoundingClientRect().left")
    stage_right = page.evaluate("document.getElementById('nav-stage').getBoundingClientRect().right")
    assert stage_right <= detail + 1
    assert not errors, errors
    page.close()
