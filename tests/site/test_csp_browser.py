"""The production Content-Security-Policy in a real browser: Daphne runs with LEGALMEM_PRODUCTION=1
(plain HTTP allowed for the test: SSL redirect off, secure cookies and HSTS overridden through
tests/overrides, CSP enforced),
and chromium visits the login, home, chat (asking a question over the websocket), navigation, admin
and API docs pages, switches the language, and reports no `securitypolicyviolation` event and no
console error on any of them."""
from __future__ import annotations

import os
import secrets
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import expect, sync_playwright

from memory.models import MemoryScope
from tests.factories import PASSWORD
from tests.live_server import CHROMIUM, CHROMIUM_ARGS, running_server
from tests.fake_llm.replies import text_reply
from tests.overrides import overrides_env

pytestmark = pytest.mark.browser

COLLECT_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (e) => {
  window.__violations.push(`${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
});
"""


@pytest.fixture
def production_server(transactional_db, fake_llm, tmp_path):
    """The production profile over plain HTTP: SSL redirect, secure cookies and HSTS off for the
    test, the Content-Security-Policy enforced as in production."""
    base = {key: value for key, value in os.environ.items() if not key.startswith(("SECURE_", "CSP_"))}
    production = {
        "LEGALMEM_PRODUCTION": "1",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "SECURE_SSL_REDIRECT": "0", "ALLOWED_HOSTS": "127.0.0.1",
        **overrides_env(settings={"SESSION_COOKIE_SECURE": False, "CSRF_COOKIE_SECURE": False,
                                  "SECURE_HSTS_SECONDS": 0}),
    }
    with running_server(fake_llm, production, tmp_path / "daphne.log", base_env=base) as port:
        yield f"http://127.0.0.1:{port}"


@pytest.fixture
def notes(world):
    """Notes for the chat recall and the navigation graph, before Playwright's loop starts."""
    laptop = world.note("笔记本电脑在购买后约两周出现大面积花屏。", matter=world.matter_laptop)
    for text in ("商家拒绝退货，理由是人为损坏。", "消费者可要求七日无理由退货。", "押金应在退租后返还。"):
        world.note(text, scope=MemoryScope.CROSS_CASE)
    return laptop


def test_chat_navigation_and_admin_pages_pass_the_production_csp(world, notes, production_server, fake_llm):
    assert os.path.exists(CHROMIUM), f"chromium is missing at {CHROMIUM}; run `make browser`"
    fake_llm.script(text_reply("结论：可以要求退货。", token_delay=0.01))
    console_errors: list[str] = []
    headers: dict[str, str] = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(locale="zh-CN")
        page.add_init_script(COLLECT_VIOLATIONS)
        page.on("console", lambda message: message.type == "error" and console_errors.append(f"{message.text} {message.location}"))
        page.on("pageerror", lambda error: console_errors.append(str(error)))
        page.on("response", lambda response: response.request.resource_type == "document"
                and headers.setdefault(urlsplit(response.url).path, response.headers.get("content-security-policy", "")))

        def violations() -> list[str]:
            return page.evaluate("window.__violations")

        page.goto(f"{production_server}/accounts/login/?next=/chat/")
        assert violations() == []
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{production_server}/chat/")
        expect(page.locator("#connection-status")).to_contain_text("语言模型")
        page.select_option("#matter", str(world.matter_laptop.pk))
        page.fill("#question", "电脑花屏了，商家不给退怎么办？")
        page.click("#send")
        expect(page.locator("#messages li.assistant .body").last).to_contain_text("可以要求退货", timeout=60_000)
        expect(page.locator(f"#recalled .note[data-note-id='{notes.pk}']")).to_be_visible()
        seen = {"/chat/": violations()}

        page.goto(f"{production_server}/navigation/")
        page.wait_for_function("() => window.legalmemNav && window.legalmemNav.loaded && window.legalmemNav.nodeIds().length > 0")
        seen["/navigation/"] = violations()

        for path in ("/", "/admin/", "/admin/memory/note/", f"/admin/memory/note/{notes.pk}/change/",
                     "/admin/memory/auditlog/", "/admin/logins/failedlogin/", "/admin/memory/matter/add/",
                     "/api/docs/"):
            page.goto(f"{production_server}{path}")
            page.wait_for_load_state("networkidle")
            seen[path] = violations()
        expect(page.locator("#swagger-ui .information-container")).to_be_visible()  # the docs page rendered

        # the language picker works without inline script
        page.goto(f"{production_server}/")
        page.select_option("select[name=language]", "en")
        page.wait_for_load_state("networkidle")
        expect(page.locator("body")).to_contain_text("Your matters")
        seen["language switch"] = violations()
        browser.close()

    assert {path: found for path, found in seen.items() if found} == {}
    # the browser's own /favicon.ico probe is no page error (the favicon is the chat page's business)
    assert [error for error in console_errors if "/favicon.ico'" not in error] == []
    assert headers, headers
    assert all("default-src 'self'" in policy and "script-src 'self'" in policy
               for policy in headers.values()), headers
