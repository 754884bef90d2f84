"""The chat page in a real browser: Debian's chromium driven by Playwright, against Daphne
(HTTP + websockets) serving the test database and the fake OpenAI-compatible LLM.
Log in, ask, watch the tokens stream, see the recalled memories, press Stop, reload.
The server and browser fixtures live in tests/chat/conftest.py."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.factories import PASSWORD
from tests.fake_llm.replies import text_reply

pytestmark = pytest.mark.browser


@pytest.fixture
def browser_timezone() -> str:
    """A browser clock half a day from the server's (Asia/Shanghai): the page must show one clock."""
    return "America/New_York"


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
    expect(page.locator("#connection-status")).to_contain_text("语言模型")

    page.select_option("#matter", str(world.matter_laptop.pk))
    page.fill("#question", "电脑花屏了，商家不给退怎么办？")
    page.click("#send")

    recalled = page.locator(f"#recalled .note[data-note-id='{note.pk}']")
    expect(recalled).to_contain_text("大面积花屏", timeout=30_000)  # the first recall loads the embedding model
    expect(page.locator("#recalled .badge.case")).to_be_visible()
    # where the note came from: its page for people, never the API's browsable view
    provenance = recalled.locator("a.provenance")
    assert provenance.get_attribute("href") == f"/memory/{note.pk}/#source-turn"
    assert provenance.text_content() == "出处：手动录入"
    answer = page.locator("#messages li.assistant .body").last
    expect(answer).to_contain_text("结论")
    first = len(answer.inner_text())
    page.wait_for_timeout(400)
    assert len(answer.inner_text()) > first  # still streaming, token by token

    page.click("#stop")
    expect(page.locator("#messages li.assistant.cancelled")).to_have_count(1)
    expect(page.locator("#messages li.assistant.cancelled .meta")).to_contain_text("助手 · 已停止")
    stopped_text = answer.inner_text()
    assert 0 < len(stopped_text) < len(long_answer)
    expect(page.locator("#stop")).to_be_disabled()

    listed_live = page.locator("#conversation-list time").first.inner_text()  # written by the script
    page.reload()
    listed_served = page.locator("#conversation-list time").first.inner_text()  # written by the server
    assert listed_live[:13] == listed_served[:13], (listed_live, listed_served)  # one clock, not the browser's
    page.click("#conversation-list a >> nth=0")
    expect(page.locator("#messages li.user .body")).to_have_text(["电脑花屏了，商家不给退怎么办？"])
    expect(page.locator("#messages li.assistant.cancelled .body")).to_have_text([stopped_text])
