"""Source markers in a real browser (issue 52): alice asks about a fact she stated in an earlier
conversation; the answer's marker is a link, hovering it outlines the recalled turn in the panel,
clicking it opens that conversation at the message she wrote; a marker to a number not in the
list is never a link. A marker to a lease passage opens the document viewer at the cited page;
bob, walled from the matter, is told memory holds nothing and gets no link to any of it; an
invented statute is marked as unverified."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

from django.db import transaction

from chat.turns import begin_turn, recall
from memory.models import Conversation
from tests.documents.conftest import add_document
from tests.documents.files import text_pdf
from tests.documents.test_extraction import LEASE
from remember.message_index import index_messages
from tests.factories import PASSWORD
from tests.chat.test_browser_history import log_in
from tests.fake_llm.replies import text_reply
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


class _Undo(Exception):
    pass


RENT = "What is the monthly rent and when is it payable?"


@pytest.fixture
def lease_number(world):
    """The lease uploaded to the deposit matter, and the number the chat gives its page-2 passage
    when alice asks RENT there (read by the chat's own recall, rolled back)."""
    lease = add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)
    number = None
    try:
        with transaction.atomic():
            start = begin_turn(world.alice, question=RENT, conversation_id=None, matter_id=world.matter_deposit.pk)
            number = next(item["number"] for item in recall(world.alice, start).recalled
                          if item["kind"] == "document" and item["page"] == 2 and "RMB 8000" in item["text"])
            raise _Undo
    except _Undo:
        pass
    return lease, number


def test_a_marker_to_a_lease_passage_opens_the_viewer_at_its_page(world, lease_number, asgi_server, fake_llm, page):
    lease, number = lease_number
    fake_llm.script(text_reply(f"The monthly rent is RMB 8000, payable before the 5th of each month [{number}]."))
    log_in(page, asgi_server, "alice")
    page.select_option("#matter", str(world.matter_deposit.pk))
    page.fill("#question", RENT)
    page.click("#send")

    answer = page.locator("#messages li.assistant .body").last
    marker = answer.locator("a.cite")
    expect(marker).to_have_count(1, timeout=30_000)
    expect(marker).to_have_text(f"[{number}]")
    href = marker.get_attribute("href")
    assert href.startswith(f"/documents/{lease.pk}/?page=2&start=")
    marker.hover()
    expect(page.locator("#recalled .cited-source")).to_contain_text("RMB 8000")
    save_screenshot(page, "chat-citation-document-marker")

    marker.click()
    page.wait_for_url(f"{asgi_server}{href}")
    expect(page.locator("body")).to_contain_text("The monthly rent is RMB 8000")
    save_screenshot(page, "chat-citation-document-viewer")


def test_bob_walled_from_the_matter_is_told_memory_holds_nothing(world, stated, asgi_server, fake_llm, page):
    fake_llm.script(text_reply("林晓雯的押金是3000元[1]。建议尽快发出书面催告。"))
    log_in(page, asgi_server, "bob")
    page.fill("#question", "林晓雯的押金是多少？")
    page.click("#send")

    answer = page.locator("#messages li.assistant .body").last
    expect(answer).to_contain_text("记忆中没有这方面的记录", timeout=30_000)
    expect(answer.locator("a.cite")).to_have_count(0)
    expect(answer).to_contain_text("（引用已删除：所引记忆不支持此句）")  # [1] is one of his own memories: it does not say this
    links = page.locator("a[href*='#message-']")
    for index in range(links.count()):
        assert f"/chat/{stated.conversation_id}/" not in links.nth(index).get_attribute("href")
    expect(page.locator("#recalled")).not_to_contain_text(STATED)
    save_screenshot(page, "chat-citation-walled-nothing")


def test_an_invented_statute_is_marked_unverified(world, stated, asgi_server, fake_llm, page):
    fake_llm.script(text_reply("林晓雯的押金是3000元[1]。根据《民法典》第九百九十九条，房东应当立即退还押金。"))
    log_in(page, asgi_server, "alice")
    page.select_option("#matter", str(world.matter_deposit.pk))
    page.fill("#question", "林晓雯的押金是多少？")
    page.click("#send")

    answer = page.locator("#messages li.assistant .body").last
    expect(answer).to_contain_text("（未核实的法条引用：《民法典》第九百九十九条）", timeout=30_000)
    expect(answer.locator("a.cite")).to_have_count(1)
    save_screenshot(page, "chat-citation-unverified-statute")
