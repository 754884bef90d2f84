"""Source markers in a real browser (issue 52): alice asks about a fact she stated in an earlier
conversation; the answer's marker is a link, hovering it outlines the recalled turn in the panel,
clicking it opens that conversation at the message she wrote; a marker to a number not in the
list is never a link."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from memory.models import Conversation
from remember.message_index import index_messages
from tests.factories import PASSWORD
from tests.fake_llm.server import text_reply
from tests.recall.test_turn_memory import said
from tests.screenshots import save_screenshot

pytestmark = pytest.mark.browser

STATED = "我的客户林晓雯租的房子押金是3000元，房东一直拒绝退还。"


@pytest.fixture
def stated(world):
    """alice's earlier conversation, indexed (created before the browser: Playwright owns the loop)."""
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit,
                                               title="押金")
    message = said(conversation, STATED)
    said(conversation, "好的，已记下押金的情况。", role="assistant", minute=1)
    index_messages()
    return message


def test_a_marker_opens_the_turn_it_cites(world, stated, asgi_server, fake_llm, page):
    fake_llm.script(text_reply("林晓雯的押金是3000元[1]，房东拒绝退还[9]。"))
    page.goto(f"{asgi_server}/accounts/login/?next=/chat/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{asgi_server}/chat/")
    page.select_option("#matter", str(world.matter_deposit.pk))
    page.fill("#question", "林晓雯的押金是多少？")
    page.click("#send")

    answer = page.locator("#messages li.assistant .body").last
    marker = answer.locator("a.cite")
    expect(marker).to_have_count(1, timeout=30_000)  # the first recall loads the embedding model
    expect(marker).to_have_text("[1]")
    href = f"/chat/{stated.conversation_id}/#message-{stated.pk}"
    assert marker.get_attribute("href") == href
    expect(answer).not_to_contain_text("[9]")  # not in the list: never shown, never linked
    marker.hover()
    expect(page.locator("#recalled .note.cited-source")).to_contain_text(STATED)
    save_screenshot(page, "chat-citation-marker")

    marker.click()
    page.wait_for_url(f"{asgi_server}{href}")
    target = page.locator(f"#message-{stated.pk}")
    expect(target).to_have_class("user cited-target")
    expect(target.locator(".body")).to_have_text(STATED)
    save_screenshot(page, "chat-citation-opened-turn")
