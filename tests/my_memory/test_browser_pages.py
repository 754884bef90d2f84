"""The "my memory" page and the admin in a real browser (Debian chromium through Playwright,
against a live server): list, search, filter, correct, forget (the forgotten note is no longer
found), the admin note history page, and the admin in both languages. Each run saves
screenshots under settings.DATA_DIR / "screenshots" for review (docs/my-memory-and-admin.md)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Page, expect, sync_playwright

from memory.models import AuditEvent, AuditLog, Message, Note, TurnExtraction
from tests.factories import PASSWORD
from tests.live_server import CHROMIUM, CHROMIUM_ARGS

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture
def screenshots() -> Path:
    folder = Path(settings.DATA_DIR) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def failed_turn(world, memory_notes) -> TurnExtraction:
    """A failed extraction job with a long title and error: the list must still fit the page."""
    laptop = memory_notes["laptop"]
    question, reply = Message.objects.filter(pk__in=laptop.source_message_ids).order_by("id")
    laptop.conversation.title = "笔记本电脑购买两周后大面积花屏，商家以人为损坏为由拒绝退货，客户询问维权途径" * 2
    laptop.conversation.save(update_fields=["title"])
    return TurnExtraction.objects.create(
        firm=world.firm_a, conversation=laptop.conversation, user_message=question, assistant_message=reply,
        status=TurnExtraction.Status.FAILED, attempts=3,
        last_error="LLM server unavailable: upstream connect error or disconnect/reset before headers " * 4,
    )


def log_in(page: Page, base: str, username: str, next_url: str) -> None:
    page.goto(f"{base}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}{next_url}")


def fits_the_page(page: Page) -> bool:
    """Neither the page nor the admin's result table scrolls sideways (nothing is cut off)."""
    return page.evaluate("""() => {
        const fits = (el) => !el || el.scrollWidth <= el.clientWidth;
        return fits(document.documentElement) && fits(document.querySelector('#changelist .results'));
    }""")


def row(page: Page, note: Note):
    return page.locator(f"#memory-list tr[data-note-id='{note.pk}']")


@pytest.mark.django_db(transaction=True)
def test_my_memory_list_search_correct_and_forget(live_server, world, memory_notes, screenshots):
    n = memory_notes
    assert os.path.exists(CHROMIUM), f"chromium is missing at {CHROMIUM}; run `make browser`"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport=VIEWPORT, locale="zh-CN")
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        log_in(page, live_server.url, "bob", "/chat/")
        page.click("header nav a[href='/memory/']")  # linked from the site navigation
        page.wait_for_url(f"{live_server.url}/memory/")
        expect(page.locator("h1")).to_have_text("我的记忆")
        expect(row(page, n["laptop"])).to_be_visible()
        expect(row(page, n["bob_profile"])).to_be_visible()
        for hidden in ("deposit", "secret", "alice_profile", "beta"):  # wall, owner, other firm
            expect(row(page, n[hidden])).to_have_count(0)
        page.screenshot(path=screenshots / "my-memory-list-zh.png", full_page=True)

        page.select_option("#id_scope", "general_law")
        page.click("#memory-search")
        expect(row(page, n["law"])).to_be_visible()
        expect(row(page, n["laptop"])).to_have_count(0)

        page.goto(f"{live_server.url}/memory/")
        page.fill("#id_q", "电脑花屏")
        page.click("#memory-search")
        expect(page.locator("#memory-list tbody tr").first).to_have_attribute("data-note-id", str(n["laptop"].pk))
        page.screenshot(path=screenshots / "my-memory-search-zh.png", full_page=True)

        row(page, n["laptop"]).locator("a").click()
        expect(page.locator("#source-turn")).to_contain_text("其他用户的对话")  # alice's turn stays hers
        page.fill("#id_content", "笔记本电脑在购买后第十天出现花屏。")
        page.fill("#correct-form #id_reason", "日期有误")
        page.click("#correct-form button[type=submit]")
        expect(page.locator("#note-content")).to_have_text("笔记本电脑在购买后第十天出现花屏。")
        expect(page.locator(".timeline")).to_contain_text("人工更正")
        expect(page.locator(".timeline")).to_contain_text("日期有误")
        page.screenshot(path=screenshots / "my-memory-note-zh.png", full_page=True)

        page.fill("#forget-form #id_reason", "客户撤回了这个说法")
        page.once("dialog", lambda dialog: dialog.accept())  # forget asks first
        page.click("#forget-form button[type=submit]")
        page.wait_for_url(f"{live_server.url}/memory/")
        expect(page.locator(".messages")).to_contain_text("不会再召回")
        page.fill("#id_q", "电脑花屏 第十天")
        page.click("#memory-search")
        expect(page.locator("#memory-count")).to_be_visible()
        expect(row(page, n["laptop"])).to_have_count(0)  # no longer found by the assistant's recall
        page.select_option("#id_status", "forgotten")
        page.click("#memory-search")
        expect(row(page, n["laptop"])).to_be_visible()

        page.goto(f"{live_server.url}/navigation/")
        page.wait_for_load_state("networkidle")
        page.screenshot(path=screenshots / "navigation-zh.png", full_page=True)
        browser.close()
    assert not errors, errors
    note = Note.objects.get(pk=n["laptop"].pk)
    assert note.status == Note.Status.FORGOTTEN
    forgotten = AuditLog.objects.get(object_id=str(note.pk), event_type=AuditEvent.NOTE_FORGOTTEN)
    assert forgotten.actor == world.bob
    assert forgotten.extra["reason"] == "客户撤回了这个说法"
    assert (screenshots / "my-memory-note-zh.png").stat().st_size > 10_000


@pytest.mark.django_db(transaction=True)
def test_admin_history_audit_search_and_both_languages(live_server, world, memory_notes, failed_turn, screenshots):
    from memory.services.notes import correct_note, forget_note

    n = memory_notes
    correct_note(n["laptop"], {"content": "笔记本电脑在购买后第十天出现花屏。"}, actor=world.alice, reason="日期有误")
    forget_note(n["deposit"], user=world.alice, reason="撤回")
    note_entries = AuditLog.objects.visible_to(world.alice).filter(object_type="note").count()
    assert note_entries == 6  # created ×4 (laptop, deposit, law, her profile), corrected, forgotten
    assert os.path.exists(CHROMIUM), f"chromium is missing at {CHROMIUM}; run `make browser`"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        zh = browser.new_page(viewport=VIEWPORT, locale="zh-CN")
        log_in(zh, live_server.url, "alice", "/admin/")
        expect(zh.locator("#site-name")).to_have_text("LegalMem 审计")
        expect(zh.locator("#content")).to_contain_text("轮次抽取")
        zh.screenshot(path=screenshots / "admin-index-zh.png", full_page=True)

        zh.goto(f"{live_server.url}/admin/memory/note/")
        expect(zh.locator("#changelist-filter")).to_contain_text("以 状态")
        assert fits_the_page(zh), "the note list is wider than 1400 px"
        zh.screenshot(path=screenshots / "admin-notes-zh.png", full_page=True)

        zh.goto(f"{live_server.url}/admin/memory/note/{n['laptop'].pk}/history/")
        expect(zh.locator("#note-history .timeline")).to_contain_text("人工更正")
        expect(zh.locator("#note-history .timeline")).to_contain_text("约两周")
        expect(zh.locator("#note-audit .audit-entry")).to_have_count(2)
        zh.screenshot(path=screenshots / "admin-note-history-zh.png", full_page=True)

        zh.goto(f"{live_server.url}/admin/memory/auditlog/?q=遗忘")
        expect(zh.locator("#result_list tbody tr")).to_have_count(1)
        expect(zh.locator("#result_list")).to_contain_text("笔记被用户遗忘")
        assert fits_the_page(zh), "the audit list is wider than 1400 px"
        zh.goto(f"{live_server.url}/admin/memory/auditlog/?q=note")
        expect(zh.locator("#result_list tbody tr")).to_have_count(note_entries)
        zh.screenshot(path=screenshots / "admin-audit-search-zh.png", full_page=True)

        zh.goto(f"{live_server.url}/admin/memory/turnextraction/")
        expect(zh.locator("#result_list tbody tr")).to_have_count(1)
        assert fits_the_page(zh), "the turn-extraction list is wider than 1400 px"
        zh.screenshot(path=screenshots / "admin-turn-extractions-zh.png", full_page=True)

        en = browser.new_page(viewport=VIEWPORT, locale="en-US")
        log_in(en, live_server.url, "alice", "/admin/memory/note/")
        expect(en.locator("#site-name")).to_have_text("LegalMem audit")
        expect(en.locator("#changelist-filter")).to_contain_text("By status")
        expect(en.locator("#changelist-filter")).to_contain_text("Case facts")
        en.goto(f"{live_server.url}/admin/memory/note/{n['laptop'].pk}/history/")
        expect(en.locator("#note-history .timeline")).to_contain_text("corrected by a person")
        en.screenshot(path=screenshots / "admin-note-history-en.png", full_page=True)
        en.goto(f"{live_server.url}/memory/")
        expect(en.locator("h1")).to_have_text("My memory")
        en.screenshot(path=screenshots / "my-memory-list-en.png", full_page=True)
        browser.close()
