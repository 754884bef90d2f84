"""Issue 54's first hour in a real browser: alice corrected a deposit from 2000 to 3000; asked
"as of" a day before the correction, the chat reads memory at that day (the chip says which) and
recalls the 2000 note, marked as replaced later; the matter's chronology shows both values in
order, the old one struck through with when and by whom it was replaced, and as of that day
shows the 2000 as it stood; bob, walled from the matter, gets a 404 at every date."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from django.db.models import F

from memory.models import Firm, Note
from memory.services.notes import supersede_note
from tests.chat.test_browser_history import log_in
from tests.fake_llm.replies import text_reply
from tests.screenshots import save_screenshot

pytestmark = pytest.mark.browser


@pytest.fixture
def corrected(world):
    """The deposit said as 2000 ten days ago, corrected to 3000 by alice two days ago, and the
    lease's dates; created before the browser (Playwright owns the event loop)."""
    Firm.objects.filter(pk=world.firm_a.pk).update(created_at=timezone.now() - timedelta(days=400))
    now = timezone.now()
    world.note("林晓雯的租赁合同是2025年3月15日签的，2027年3月14日到期。", matter=world.matter_deposit, speaker="林晓雯",
               said_at=now - timedelta(days=12))
    old = world.note("林晓雯交的押金是2000元。", matter=world.matter_deposit, speaker="林晓雯",
                     said_at=now - timedelta(days=10))
    new = world.note("林晓雯交的押金是3000元。", matter=world.matter_deposit, speaker="林晓雯",
                     said_at=now - timedelta(days=2))
    supersede_note(old, new, actor=world.alice, reason="刚才说错了，押金是3000不是2000")
    # recorded when they were said, as in a live first hour (the chronology's "as of" is system time)
    Note.objects.filter(matter=world.matter_deposit).update(stored_at=F("said_at"))
    Note.objects.filter(pk=old.pk).update(retired_at=new.said_at)
    return old, new, timezone.localdate() - timedelta(days=5)


def test_the_deposit_as_of_a_day_before_the_correction(world, corrected, asgi_server, fake_llm, page):
    old, new, day = corrected
    fake_llm.script(text_reply("截至那天，记忆中的押金是2000元[1]，之后更正为3000元。"))
    log_in(page, asgi_server, "alice")
    page.select_option("#matter", str(world.matter_deposit.pk))
    page.fill("#question", f"截至{day.year}年{day.month}月{day.day}日，林晓雯的押金是多少？")
    page.click("#send")
    chip = page.locator("#held-at-chip")
    expect(chip).to_be_visible(timeout=30_000)  # the first recall loads the embedding model
    expect(chip).to_contain_text(f"{day:%Y-%m-%d}")
    first = page.locator("#recalled .note").first
    expect(first).to_contain_text("2000")
    expect(page.locator("#recalled")).not_to_contain_text("押金是3000元")
    expect(page.locator("#messages li.assistant .body").last).to_contain_text("2000", timeout=30_000)
    save_screenshot(page, "chat-as-of")
    page.click("#held-at-clear")
    expect(chip).to_be_hidden()

    page.goto(f"{asgi_server}/matters/{world.matter_deposit.pk}/chronology/")
    rows = page.locator("table.chronology tbody tr")
    expect(rows).to_have_count(4)  # the lease at its two dates, the 2000 and the 3000
    expect(rows.nth(0)).to_contain_text("2025-03-15")
    replaced = page.locator("tr.superseded")
    expect(replaced.locator("del")).to_have_text(old.content)
    expect(replaced).to_contain_text("alice")
    expect(replaced).to_contain_text(new.content)
    save_screenshot(page, "chronology")
    page.fill("input[name=as_of]", f"{day:%Y-%m-%d}")
    page.click(".chronology-controls button[type=submit]")
    expect(page.locator("p.as-of")).to_be_visible()
    expect(page.locator("tr.superseded")).to_have_count(0)
    expect(page.locator("table.chronology")).to_contain_text(old.content)
    expect(page.locator("table.chronology")).not_to_contain_text(new.content)
    save_screenshot(page, "chronology-as-of")


def test_bob_gets_a_404_for_the_chronology_at_every_date(world, corrected, asgi_server, page):
    old, new, day = corrected
    log_in(page, asgi_server, "bob")
    for query in ("", f"?as_of={day:%Y-%m-%d}"):
        response = page.goto(f"{asgi_server}/matters/{world.matter_deposit.pk}/chronology/{query}")
        assert response.status == 404
        expect(page.locator("body")).not_to_contain_text("押金")
