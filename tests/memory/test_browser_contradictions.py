"""Contradiction flags in a real browser, in both languages, in the one vocabulary: alice sees the
flag on both notes on the my-memory list and pages and in admin (the note list, the note, the link,
the audit entry of a correction that settled another pair), each page free of snake_case words,
internal keys and words of the other language (the checks of test_browser_vocabulary.py); bob
(same firm, walled off from the deposit matter) and charlie (another firm) see no flag at all."""
from __future__ import annotations

import os
import shutil

import pytest
from playwright.sync_api import sync_playwright

from memory.models import AuditEvent, AuditLog
from memory.services.notes import correct_note
from tests.live_server import CHROMIUM, CHROMIUM_ARGS
from tests.memory.test_browser_vocabulary import (  # noqa: F401  (server: the live-server fixture)
    DOCS, LANGUAGES, VIEWPORT, corpus, log_in, problems, server,
)
from tests.screenshots import save_screenshot

pytestmark = pytest.mark.browser  # a real chromium against a Daphne of its own

FLAG = {"zh": "说法矛盾", "en": "Contradiction"}


@pytest.fixture
def pairs(world):
    """An open pair on the deposit matter, and a settled one (a correction removed its link)."""
    old, new, link = world.contradicting_notes("房东说墙面有污渍，要扣2000元押金。",
                                               "房东今天改口了，房东说墙面有污渍，要扣3000元押金。", "3000 vs 2000",
                                               actor="system:pipeline")
    rent_old, _rent_new, _ = world.contradicting_notes("月租金是3500元。", "月租金是3800元。", "3800 vs 3500",
                                                       actor="system:pipeline")
    correct_note(rent_old, {"content": "月租金原为3500元，2026年3月起为3800元。"}, actor=world.alice, reason="核实")
    settled = AuditLog.objects.get(event_type=AuditEvent.LINK_DELETED)
    return {"old": old, "new": new, "link": link, "settled": settled}


def test_flags_read_in_one_vocabulary_for_alice_and_never_reach_bob_or_charlie(server, world, pairs):  # noqa: F811
    assert os.path.exists(CHROMIUM), f"chromium is missing at {CHROMIUM}; run `make browser`"
    data = corpus() + "\n核实"
    old, new = pairs["old"], pairs["new"]
    walks = {
        "alice": [
            ("my-memory", "/memory/", 2), ("my-memory-search", "/memory/?q=押金", 2),
            ("my-memory-note", f"/memory/{old.pk}/", 1), ("admin-notes", "/admin/memory/note/", 2),
            ("admin-note", f"/admin/memory/note/{new.pk}/change/", 1),
            ("admin-link", f"/admin/memory/notelink/{pairs['link'].pk}/change/", 0),
            ("admin-settled", f"/admin/memory/auditlog/{pairs['settled'].pk}/change/", 0),
        ],
        "bob": [("my-memory", "/memory/", 0), ("my-memory-search", "/memory/?q=押金", 0)],
        "charlie": [("my-memory", "/memory/", 0), ("admin-notes", "/admin/memory/note/", 0)],
    }
    found: dict[str, list[str]] = {}
    with sync_playwright() as playwright:  # no ORM below: Playwright runs an event loop in this thread
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        for username, walk in walks.items():
            for language, locale in LANGUAGES.items():
                page = browser.new_page(viewport=VIEWPORT, locale=locale)
                log_in(page, server, username)
                for name, path, flags in walk:
                    page.goto(f"{server}{path}")
                    page.wait_for_load_state("networkidle")
                    text = page.evaluate("document.body.innerText")
                    where = f"{username}/{language} {name}"
                    trouble = problems(text, language, data)
                    if name == "admin-notes":
                        shown = page.locator("span.conflict").count()
                    elif name.startswith("admin"):
                        shown = page.locator("#contradictions").count()
                    else:
                        shown = page.locator(".badge.conflict").count()
                    if shown != flags:
                        trouble.append(f"{shown} flags, expected {flags}")
                    if username != "alice" and ("2000元" in text or "3000元" in text):
                        trouble.append("a note behind the wall is shown")
                    if trouble:
                        found[where] = trouble
                    if username == "alice" and name in ("my-memory", "admin-note"):
                        shot = save_screenshot(page, f"contradiction-{name}-{language}")
                        if os.environ.get("DOCS_SCREENSHOTS") == "1":
                            shutil.copy(shot, DOCS / shot.name)
                    if name == "admin-settled" and language == "zh":
                        assert "经人工更正后解决" in text and "被更正的笔记" in text
                    if name == "admin-link" and language == "zh":
                        assert "同一事项前后说法不一（3000 与 2000），两条都仍有效" in text
                    if name == "my-memory" and username == "alice":
                        assert FLAG[language] in text
                page.close()
        browser.close()
    assert found == {}, found
