"""The chat page keeps what happened, in a real browser (chromium via Playwright, Daphne, the
fake LLM): each conversation has its own URL; reload and back/forward bring back the thread and
each answer's recalled memories; every reply says in words whether it is complete or stopped;
a matter change starts a new conversation; a rejected question is shown as rejected; labels
are translated in Chinese and in English. Screenshots go to DATA_DIR/screenshots for review."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from memory.models import Category, Conversation, Message, SourceType
from memory.services.conversations import save_message
from tests.factories import PASSWORD
from tests.fake_llm.replies import error_reply, text_reply
from tests.screenshots import save_screenshot
from tests.overrides import overrides_env

pytestmark = pytest.mark.browser

RATE_LIMIT = 3
FIRST_ANSWER_MS = 30_000  # the server's first recall loads the embedding model


@pytest.fixture
def server_env() -> dict[str, str]:
    # no client retries: a scripted model failure is seen once
    return overrides_env(settings={"CHAT_RATE_LIMIT_PER_MINUTE": RATE_LIMIT, "LLM_MAX_RETRIES": 0})


@pytest.fixture
def laptop_note(world):
    """Created before the browser starts: Playwright's sync API runs an event loop in this thread."""
    return world.note("笔记本电脑在购买后约两周出现大面积花屏，购物小票保存完好。", matter=world.matter_laptop,
                      category=Category.EVIDENCE, source_type=SourceType.CHAT_STORY, source_id="story-7")


@pytest.fixture
def noisy_conversation(world) -> Conversation:
    """Control characters in a title and a message, as stored before any input cleaning."""
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, title="bell")
    message = save_message(conversation, "user", "ring the bell", speaker="alice")
    Conversation.objects.filter(pk=conversation.pk).update(title="Bell\x07 in\ntitle")
    Message.objects.filter(pk=message.pk).update(content="ring\x07the\x1bbell")
    return conversation


def log_in(page, server: str, username: str) -> None:
    page.goto(f"{server}/accounts/login/?next=/chat/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server}/chat/")


def ask(page, text: str) -> None:
    page.fill("#question", text)
    page.click("#send")


def conversations(page) -> list[dict]:
    """The user's conversations from the API, newest first (real HTTP from the page)."""
    return page.evaluate("fetch('/api/chat/conversations/').then(r => r.json()).then(d => d.results)")


def test_reload_back_forward_stop_matter_switch_and_rejection(world, laptop_note, asgi_server, fake_llm, page):
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, asgi_server, "bob")
    note_card = page.locator(f"#recalled .note[data-note-id='{laptop_note.pk}']")

    # 1. first conversation, about the laptop matter: the URL names it once it exists
    page.select_option("#matter", str(world.matter_laptop.pk))
    fake_llm.script(text_reply("结论：可以要求退货。", token_delay=0.01))
    ask(page, "电脑花屏了，商家不给退怎么办？")
    expect(page.locator("#messages li.assistant .meta")).to_contain_text("助手 · 已完成", timeout=FIRST_ANSWER_MS)
    page.wait_for_url(re.compile(r"/chat/\d+/$"))
    first_url = page.url
    expect(note_card).to_contain_text("大面积花屏")
    expect(page.locator("#recalled .badge.case")).to_have_text("案件事实")
    expect(page.locator("#plan")).to_contain_text("检索顺序: 案件事实 → 用户画像")
    expect(page.locator("#plan")).not_to_contain_text("case")
    expect(note_card.locator(".facts")).to_contain_text("类别: 证据")
    note_card.locator("summary").click()
    expect(note_card.locator(".scores")).to_contain_text("语义")
    expect(note_card.locator(".provenance")).to_contain_text("剧情对话")
    expect(page.locator("#conversation-list a.active .title")).to_have_text("电脑花屏了，商家不给退怎么办？")
    expect(page.locator("#conversation-list a.active .when")).to_contain_text(world.matter_laptop.reference)

    # 2. reload: the thread and the answer's memories come back without a click
    page.reload()
    expect(page.locator("#messages li")).to_have_count(2)
    expect(page.locator("#messages li.assistant .body")).to_have_text("结论：可以要求退货。")
    expect(note_card).to_contain_text("大面积花屏")
    expect(page.locator("#plan")).to_contain_text("案件事实")
    expect(page.locator("#matter")).to_have_value(str(world.matter_laptop.pk))

    # 3. a new conversation, stopped half-way: the reply says so in words
    page.click("#new-conversation")
    page.wait_for_url(f"{asgi_server}/chat/")
    expect(page.locator("#messages li")).to_have_count(0)
    fake_llm.script(text_reply("结论：先固定证据。" + "依据消费者权益保护法分析" * 80, token_delay=0.05))
    ask(page, "小票丢了还能退吗？")
    expect(page.locator("#messages li.assistant.streaming .body")).to_contain_text("结论")
    page.click("#stop")
    expect(page.locator("#messages li.assistant.cancelled .meta")).to_contain_text("助手 · 已停止")
    page.wait_for_url(re.compile(r"/chat/\d+/$"))
    second_url = page.url
    assert second_url != first_url

    # 4. back and forward: each URL shows its own thread, status and memories
    page.go_back()
    page.wait_for_url(first_url)
    expect(page.locator("#messages li.user .body")).to_have_text(["电脑花屏了，商家不给退怎么办？"])
    expect(page.locator("#messages li.assistant .meta")).to_contain_text("已完成")
    expect(note_card).to_be_visible()
    page.go_forward()
    page.wait_for_url(second_url)
    expect(page.locator("#messages li.user .body")).to_have_text(["小票丢了还能退吗？"])
    expect(page.locator("#messages li.assistant.cancelled .meta")).to_contain_text("已停止")

    # 5. another matter while a conversation is open: the next question starts a new one
    page.select_option("#matter", "")
    expect(page.locator("#notice")).to_contain_text("新的对话")
    page.wait_for_url(f"{asgi_server}/chat/")
    expect(page.locator("#messages li")).to_have_count(0)
    fake_llm.script(text_reply("一般性回答。", token_delay=0.01))
    ask(page, "一般的退货时限是多久？")
    expect(page.locator("#messages li.assistant .meta")).to_contain_text("已完成")
    listed = conversations(page)
    assert len(listed) == 3
    assert listed[0]["matter_id"] is None
    assert listed[0]["title"] == "一般的退货时限是多久？"
    assert [c["matter_id"] for c in listed[1:]] == [world.matter_laptop.pk] * 2

    # 6. over the rate limit: the question is shown as rejected, not as sent, and not saved
    ask(page, "第四个问题会被拒绝吗？")
    rejected = page.locator("#messages li.user.rejected")
    expect(rejected.locator(".meta")).to_contain_text("被拒绝，未保存")
    expect(rejected.locator(".reason")).to_contain_text("提问过于频繁")
    expect(page.locator("#error")).to_contain_text("提问过于频繁")
    expect(page.locator("#send")).to_be_enabled()
    save_screenshot(page, "chat-rejected")
    messages = page.evaluate(f"fetch('/api/chat/conversations/{listed[0]['id']}/messages/').then(r => r.json())")
    assert [m["content"] for m in messages["results"] if m["role"] == "user"] == ["一般的退货时限是多久？"]
    page.reload()
    expect(page.locator("#messages li.user")).to_have_count(1)

    expect(page.locator("#conversation-list li")).to_have_count(3)
    save_screenshot(page, "chat")
    assert not errors, errors


@pytest.mark.parametrize("browser_locale", ["en-US"])
def test_english_labels_control_characters_and_a_url_outsiders_cannot_open(
    world, laptop_note, noisy_conversation, asgi_server, fake_llm, page,
):
    log_in(page, asgi_server, "alice")
    page.select_option("#matter", str(world.matter_laptop.pk))
    fake_llm.script(text_reply("Conclusion: ask for a refund.", token_delay=0.01))
    ask(page, "The laptop screen broke after two weeks. Refund?")
    expect(page.locator("#messages li.assistant .meta")).to_contain_text("Assistant · Complete", timeout=FIRST_ANSWER_MS)
    page.wait_for_url(re.compile(r"/chat/\d+/$"))
    card = page.locator(f"#recalled .note[data-note-id='{laptop_note.pk}']")
    expect(page.locator("#recalled .badge.case")).to_have_text("Case facts")
    expect(page.locator("#plan")).to_contain_text("Search order: Case facts → User profile")
    expect(card.locator(".facts")).to_contain_text("Category: Evidence")
    card.locator("summary").click()
    expect(card.locator(".scores")).to_contain_text("Semantic")
    expect(card.locator(".provenance")).to_contain_text("Story conversation")
    expect(card.locator(".provenance")).not_to_contain_text("story-7")  # an internal id, not for the reader

    # the model fails: the reply says so, the question stays sent
    fake_llm.script(error_reply(500, "boom"))
    ask(page, "And the receipt?")
    expect(page.locator("#messages li.assistant.failed .meta")).to_contain_text("Assistant · Failed")
    expect(page.locator("#messages li.user")).to_have_count(2)
    expect(page.locator("#messages li.user.rejected")).to_have_count(0)
    save_screenshot(page, "chat-en")

    # control characters are shown as visible escapes, titles on one line
    page.goto(f"{asgi_server}/chat/{noisy_conversation.pk}/")
    expect(page.locator("#messages li.user .body")).to_have_text("ring\\x07the\\x1bbell")
    expect(page.locator(f"#conversation-list a[data-conversation='{noisy_conversation.pk}'] .title")).to_have_text(
        "Bell\\x07 in title")

    # the conversation's URL is alice's: bob (same firm) and charlie (other firm) get 404
    url = page.url
    page.context.clear_cookies()
    for outsider in ("bob", "charlie"):
        log_in(page, asgi_server, outsider)
        response = page.goto(url)
        assert response.status == 404
        page.context.clear_cookies()
    assert page.goto(f"{asgi_server}/favicon.ico").status == 200


@pytest.fixture
def two_turns(world) -> Conversation:
    """alice's conversation of two finished turns, stored before the browser starts."""
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, title="deposit")
    for role, text in (("user", "押金什么时候退？"), ("assistant", "房东说下周五。"), ("user", "要写收据吗？"),
                       ("assistant", "要，写明金额。")):
        save_message(conversation, role, text, speaker="alice")
    return conversation


def test_a_conversation_opened_twice_at_once_shows_each_message_once(world, two_turns, asgi_server, page):
    """Two loads of the same conversation in flight (a click while the socket reconnects, a turn
    finishing in another tab): only the latest shows its messages — never the thread twice."""
    log_in(page, asgi_server, "alice")
    link = page.locator(f'#conversation-list a[data-conversation="{two_turns.pk}"]')
    expect(link).to_be_visible()
    page.evaluate("(a) => { a.click(); a.click(); a.click(); }", link.element_handle())
    expect(page.locator("#messages li.user .body")).to_have_text(["押金什么时候退？", "要写收据吗？"])
    expect(page.locator("#messages li.assistant .body")).to_have_text(["房东说下周五。", "要，写明金额。"])
    page.wait_for_timeout(500)  # every fetch has answered by now
    expect(page.locator("#messages li")).to_have_count(4)
