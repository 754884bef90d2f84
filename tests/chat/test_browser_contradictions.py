"""The chat's recalled panel flags two current notes that contradict each other — the newer one
listed first — in a real browser (chromium, Playwright, Daphne; fixtures in tests/chat/conftest.py);
and a reply's saved recall keeps the flag only while the reader still sees the other note."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from playwright.sync_api import expect

from records.services.reply_scrub import scrub_recalled_notes
from chat.turns import begin_turn, recall
from memory.models import Message
from memory.services.conversations import save_message
from tests.factories import PASSWORD
from tests.fake_llm.replies import text_reply
from tests.screenshots import save_screenshot

DOCS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
pytestmark = pytest.mark.browser


def test_the_recalled_payload_flags_both_and_only_for_who_may_see_them(world, contradicting_deposit):
    old, new = contradicting_deposit
    start = begin_turn(world.alice, question="房东要扣多少押金？", conversation_id=None,
                       matter_id=world.matter_deposit.pk)
    recalled = [item for item in recall(world.alice, start).recalled if item["kind"] == "note"]
    ids = [item["id"] for item in recalled]
    assert ids.index(str(new.pk)) < ids.index(str(old.pk))
    by_id = {item["id"]: item for item in recalled}
    assert [(c["id"], c["other_is_newer"]) for c in by_id[str(old.pk)]["contradictions"]] == [(str(new.pk), True)]
    assert [(c["id"], c["other_is_newer"]) for c in by_id[str(new.pk)]["contradictions"]] == [(str(old.pk), False)]
    for outsider in (world.bob, world.charlie):
        start = begin_turn(outsider, question="房东要扣多少押金？", conversation_id=None, matter_id=None)
        shown = str(recall(outsider, start).recalled)
        assert str(old.pk) not in shown and str(new.pk) not in shown and "2000元押金" not in shown


def test_the_recalled_panel_shows_the_flag_on_both_notes(world, contradicting_deposit, asgi_server, fake_llm, page):
    old, new = contradicting_deposit
    fake_llm.script(text_reply("房东先后说扣2000元和3000元，说法不一致。"))
    page.goto(f"{asgi_server}/accounts/login/?next=/chat/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{asgi_server}/chat/")
    expect(page.locator("#connection-status")).to_contain_text("语言模型")
    page.select_option("#matter", str(world.matter_deposit.pk))
    page.fill("#question", "房东要扣多少押金？")
    page.click("#send")

    newer = page.locator(f"#recalled .note[data-note-id='{new.pk}']")
    older = page.locator(f"#recalled .note[data-note-id='{old.pk}']")
    expect(newer.locator(".contradiction")).to_contain_text("较早的说法", timeout=30_000)
    expect(older.locator(".contradiction")).to_contain_text("较新的说法")
    expect(older.locator(".contradiction a")).to_have_attribute("href", f"/memory/{new.pk}/")
    ids = page.locator("#recalled .note").evaluate_all("els => els.map(e => e.dataset.noteId)")
    assert ids.index(str(new.pk)) < ids.index(str(old.pk))
    shot = save_screenshot(page, "chat-contradiction-zh")
    if os.environ.get("DOCS_SCREENSHOTS") == "1":
        shutil.copy(shot, DOCS / shot.name)

    page.reload()  # the saved recall comes back with its flags
    page.click("#conversation-list a >> nth=0")
    page.locator("#messages li.assistant .show-memories").last.click()
    expect(page.locator(f"#recalled .note[data-note-id='{old.pk}'] .contradiction")).to_contain_text("较新的说法")


def test_erasing_a_note_scrubs_its_copy_shown_as_a_contradiction(world, contradicting_deposit):
    old, new = contradicting_deposit
    start = begin_turn(world.alice, question="房东要扣多少押金？", conversation_id=None,
                       matter_id=world.matter_deposit.pk)
    recalled = recall(world.alice, start).recalled
    reply = save_message(start.conversation, "assistant", "说法不一致。", speaker="assistant")
    Message.objects.filter(pk=reply.pk).update(recalled=recalled)
    assert scrub_recalled_notes([old.pk]) == 1
    kept = Message.objects.get(pk=reply.pk).recalled
    assert "2000元押金" not in str(kept) and str(old.pk) not in str(kept)
    assert any(entry.get("id") == str(new.pk) and entry["contradictions"] == [] for entry in kept)
