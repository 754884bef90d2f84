"""Two tabs of one user in a real browser (chromium, Daphne, the fake LLM): a conversation started
in one tab appears in the other's list at once, and a tab showing a conversation continued in
the other tab shows the new answer without a reload (the ``conversation_updated`` frame; across
servers: tests/site/test_scale_out.py)."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.chat.test_browser_history import FIRST_ANSWER_MS, ask, log_in
from tests.fake_llm.replies import text_reply

pytestmark = pytest.mark.browser


def test_a_turn_in_one_tab_shows_in_the_other(world, asgi_server, fake_llm, page):
    errors: list[str] = []
    other = page.context.browser.new_page(locale="zh-CN")  # alice again, in a second window
    for tab in (page, other):
        tab.on("pageerror", lambda error: errors.append(str(error)))
        log_in(tab, asgi_server, "alice")
    expect(other.locator("#connection-status")).to_contain_text("已连接", timeout=FIRST_ANSWER_MS)

    fake_llm.script(text_reply("第一个回答：保留小票。"))
    ask(page, "电脑花屏了怎么办？")
    expect(page.locator("#messages li.assistant .meta")).to_contain_text("已完成", timeout=FIRST_ANSWER_MS)
    link = other.locator("#conversation-list a.conversation-link").first
    expect(link).to_contain_text("电脑花屏了怎么办", timeout=FIRST_ANSWER_MS)

    link.click()  # the other tab opens the conversation, then the first tab continues it
    expect(other.locator("#messages li.assistant")).to_contain_text("第一个回答")
    fake_llm.script(text_reply("第二个回答：可以投诉。"))
    ask(page, "商家不理我怎么办？")
    expect(other.locator("#messages li.assistant").nth(1)).to_contain_text("第二个回答", timeout=FIRST_ANSWER_MS)
    expect(other.locator("#messages li.user").nth(1)).to_contain_text("商家不理我怎么办？")
    assert errors == []
