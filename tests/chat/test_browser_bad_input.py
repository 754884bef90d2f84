"""The chat page recovers from a refused question (issue 13, finding 1): a question with a NUL
character used to leave Send disabled and Stop enabled until a reload. In chromium against
Daphne: the error is shown, Send works again, the words are given back, and the next question
is answered."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.factories import PASSWORD

pytestmark = pytest.mark.browser


def test_a_refused_question_shows_the_error_and_send_works_again(world, asgi_server, page):
    page.goto(f"{asgi_server}/accounts/login/?next=/chat/")
    page.fill("input[name=username]", "bob")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{asgi_server}/chat/")
    expect(page.locator("#connection-status")).to_contain_text("语言模型")

    page.fill("#question", "押金\u0000问题")
    page.click("#send")
    expect(page.locator("#error")).to_contain_text("question")
    expect(page.locator("#send")).to_be_enabled()
    expect(page.locator("#stop")).to_be_disabled()
    expect(page.locator("#question")).to_have_value("押金\u0000问题")

    page.fill("#question", "押金什么时候退？")
    page.click("#send")
    expect(page.locator("#messages li.assistant .body").last).not_to_be_empty()
    expect(page.locator("#send")).to_be_enabled(timeout=20_000)
