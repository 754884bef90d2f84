"""Issue 54, "erasure wins over history", in a real browser: the deposit corrected from 2000 to 3000
(tests/chat/test_browser_as_of.py's story) is first seen as it stood a day before the correction;
then the client, 林晓雯, is erased the way an operator does it (``manage.py erase --subject``, in a
process of its own on the same database, while the server keeps running with what it cached);
then, as alice, nothing of her comes back at any date — the chat asked "as of" that day, the
chronology at that day and today, My memory at that day, the navigation graph at that day — nor
through the APIs (``POST /api/memory/search`` with ``as_of`` and with ``valid_at``, the chronology
and notes APIs, the graph); what does not name her stays, at the same dates. The admin audit
shows that an erasure happened (a tombstone with its counts and reason), not what was erased."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.db.models import F
from django.utils import timezone
from playwright.sync_api import expect

from memory.models import Note
from tests.chat import test_browser_as_of
from tests.chat.test_browser_history import log_in
from tests.fake_llm.replies import text_reply
from tests.live_server import test_database_url
from tests.screenshots import save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]
SUBJECT = "林晓雯"
REASON = "本人书面要求"

corrected = test_browser_as_of.corrected  # the fixture, shared (all database work before Playwright starts)


@pytest.fixture
def story(world, corrected):
    """The corrected deposit, and two notes that do not name her: one of her matter (said before
    the day asked about), one of the laptop matter. Returns what the test compares by."""
    old, new, day = corrected
    said = timezone.now() - timedelta(days=11)
    wall = world.note("房东要求退房前把墙面恢复原状，否则从押金里扣钱。", matter=world.matter_deposit, speaker="alice",
                      said_at=said)
    laptop = world.note("笔记本电脑在购买后约两周出现大面积花屏，购物小票保存完好。", matter=world.matter_laptop,
                        said_at=said)
    Note.objects.filter(pk__in=[wall.pk, laptop.pk]).update(stored_at=F("said_at"))
    lease = Note.objects.get(matter=world.matter_deposit, content__startswith=f"{SUBJECT}的租赁合同")
    erased = {str(note.pk) for note in (old, new, lease)}
    # what may never be seen again: her name, both values, the correction's reason (it quotes them)
    words = [SUBJECT, "2000元", "3000元", "3000不是2000", old.content, new.content, lease.content]
    return {"old": old, "new": new, "day": f"{day:%Y-%m-%d}", "wall": wall, "laptop": laptop,
            "erased": erased, "words": words}


def erase_subject(firm_slug: str, data_folder: Path) -> str:
    """``manage.py erase --subject`` as an operator runs it, in a process of its own on the test
    database (the live server keeps running, with whatever it cached)."""
    env = {**os.environ, "DATABASE_URL": test_database_url(), "SECRET_KEY": settings.SECRET_KEY,
           "LEGALMEM_DATA_DIR": str(data_folder)}
    data_folder.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        [sys.executable, "manage.py", "erase", "--subject", SUBJECT, "--firm", firm_slug, "--actor", "alice",
         "--reason", REASON],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def absent(text: str, words: list[str]) -> list[str]:
    """The erased words found in ``text`` (none, when erasure won)."""
    return [word for word in words if word in text]


def api_get(page, url: str) -> str:
    response = page.request.get(url)
    assert response.status == 200, (url, response.status, response.text()[:500])
    return response.text()


def api_search(page, server: str, body: dict) -> dict:
    """``POST /api/memory/search`` with the browser's session, as the page's own scripts send it."""
    token = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    response = page.request.post(f"{server}/api/memory/search", data=json.dumps(body, ensure_ascii=False),
                                 headers={"Content-Type": "application/json", "X-CSRFToken": token,
                                          "Referer": f"{server}/chat/"})
    assert response.status == 200, (body, response.status, response.text()[:500])
    return response.json()


LOADED = "() => window.legalmemNav && window.legalmemNav.loaded && window.legalmemNav.nodeIds().length > 0"


def ask_as_of(page, server: str, matter_id: int, question: str) -> None:
    page.goto(f"{server}/chat/")
    page.select_option("#matter", str(matter_id))
    page.fill("#question", question)
    page.click("#send")
    expect(page.locator("#held-at-chip")).to_be_visible(timeout=30_000)  # the first recall loads the model


def test_after_erasing_the_client_no_date_shows_her(world, story, asgi_server, fake_llm, page, tmp_path):
    s = story
    day, matter = s["day"], world.matter_deposit.pk
    y, m, d = (int(part) for part in day.split("-"))
    fake_llm.script(text_reply("截至那天，记忆中的押金是2000元[1]，之后更正为3000元。"),
                    text_reply("截至那天，记忆中只记着退房前要把墙面恢复原状，没有押金金额的记录。"))
    log_in(page, asgi_server, "alice")

    # before: the memory as it stood that day holds the 2000 (and the server caches that day's graph)
    ask_as_of(page, asgi_server, matter, f"截至{y}年{m}月{d}日，{SUBJECT}的押金是多少？")
    expect(page.locator("#recalled .note").first).to_contain_text("2000")
    expect(page.locator("#messages li.assistant .body").last).to_contain_text("2000", timeout=30_000)
    page.goto(f"{asgi_server}/matters/{matter}/chronology/?as_of={day}")
    expect(page.locator("table.chronology")).to_contain_text(s["old"].content)
    page.goto(f"{asgi_server}/navigation/?as_of={day}")
    page.wait_for_function(LOADED)
    assert str(s["old"].pk) in page.evaluate("window.legalmemNav.nodeIds()")

    out = erase_subject(world.firm_a.slug, tmp_path / "erase-data")
    assert SUBJECT not in out  # the command names the subject by its digest only

    # the chat asked "as of" that day: the chip says the day; nothing of her is recalled
    ask_as_of(page, asgi_server, matter, f"截至{y}年{m}月{d}日，押金是多少？")
    expect(page.locator("#held-at-chip")).to_contain_text(day)
    expect(page.locator("#messages li.assistant .body").last).to_contain_text("墙面", timeout=30_000)
    expect(page.locator("#recalled")).to_contain_text(s["wall"].content)  # what does not name her stays
    assert absent(page.locator("body").inner_text(), s["words"]) == []  # nor in the conversation list

    # the chronology at that day and today: only the note that does not name her
    for query in (f"?as_of={day}", ""):
        page.goto(f"{asgi_server}/matters/{matter}/chronology/{query}")
        rows = page.locator("table.chronology tbody tr")
        expect(rows).to_have_count(1)
        expect(rows.first).to_contain_text(s["wall"].content)
        expect(page.locator("tr.superseded")).to_have_count(0)
        assert absent(page.locator("body").inner_text(), s["words"]) == [], query
        if query:
            expect(page.locator("p.as-of")).to_be_visible()
            save_screenshot(page, "chronology-after-erasure")
        for export in ("md", "csv"):
            assert absent(api_get(page, f"{asgi_server}/matters/{matter}/chronology.{export}{query}"), s["words"]) == []

    # My memory at that day, through its date control; and what was already history then
    page.goto(f"{asgi_server}/memory/")
    page.fill("#memory-filters input[name=as_of]", day)
    page.click("#memory-search")
    expect(page.locator("p.as-of")).to_be_visible()
    expect(page.locator("#memory-list")).to_contain_text(s["wall"].content)
    expect(page.locator("#memory-list")).to_contain_text(s["laptop"].content)
    assert absent(page.locator("body").inner_text(), s["words"]) == []
    for status in ("superseded", "active"):
        page.goto(f"{asgi_server}/memory/?as_of={day}&status={status}&q={SUBJECT}")
        assert absent(page.locator("#memory-list").inner_text(), s["words"]) == [], status

    # the navigation graph of that day (this server drew it with her notes before the erasure)
    page.goto(f"{asgi_server}/navigation/?as_of={day}")
    page.wait_for_function(LOADED)
    expect(page.locator("#nav-as-of-chip")).to_contain_text(day)
    drawn = set(page.evaluate("window.legalmemNav.nodeIds()"))
    assert drawn == {str(s["wall"].pk), str(s["laptop"].pk)}, drawn
    assert absent(page.locator("body").inner_text(), s["words"]) == []

    # the APIs, with alice's session: search at that day in system time and in world time
    for moment in ({"as_of": day}, {"valid_at": day}, {"as_of": day, "valid_at": day}):
        for query in (f"{SUBJECT}的押金是多少", "押金是2000元", "押金是3000元"):
            found = api_search(page, asgi_server, {"query": query, "k": 20, **moment})
            notes = {hit["note"]["id"] for hit in found["hits"] if hit["note"]}
            assert str(s["wall"].pk) in notes and not notes & s["erased"], (moment, query, notes)
            # all but the query repeated back (its plan, and the names nothing visible holds)
            shown = {key: value for key, value in found.items() if key not in ("query", "plan", "nothing_on")}
            assert absent(json.dumps(shown, ensure_ascii=False), s["words"]) == [], (moment, query)
    for url in (f"/api/matters/{matter}/chronology/?as_of={day}", f"/api/matters/{matter}/chronology/",
                f"/api/memory/notes/?as_of={day}", f"/api/memory/notes/?as_of={day}&status=superseded",
                f"/api/navigation/graph?as_of={day}"):
        assert absent(api_get(page, f"{asgi_server}{url}"), s["words"]) == [], url
    for note_id in s["erased"]:
        assert page.request.get(f"{asgi_server}/api/memory/notes/{note_id}/").status == 404
    chronology = json.loads(api_get(page, f"{asgi_server}/api/matters/{matter}/chronology/?as_of={day}"))
    assert [entry["note_id"] for entry in chronology["entries"]] == [str(s["wall"].pk)]

    # the admin audit: that an erasure happened (who, when, counts, the reason) — not what
    page.goto(f"{asgi_server}/admin/memory/auditlog/?event_type__exact=erased")
    tombstones = page.locator("#result_list tbody tr")
    expect(tombstones).to_have_count(1)
    expect(tombstones.first).to_contain_text("alice")
    assert absent(page.locator("#changelist").inner_text(), s["words"]) == []
    tombstones.first.locator("a").first.click()
    expect(page.locator("body")).to_contain_text(REASON)
    assert absent(page.locator("body").inner_text(), s["words"]) == []
    page.goto(f"{asgi_server}/admin/memory/auditlog/")
    assert absent(page.locator("#changelist").inner_text(), s["words"]) == []
    page.goto(f"{asgi_server}/admin/memory/auditlog/?q={SUBJECT}")
    expect(page.locator("#result_list tbody tr")).to_have_count(0)
