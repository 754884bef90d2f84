"""Issue 50's first hour, live (not in CI): alice types the deposit, its correction and the
recall question in a real browser against a running product (``make run`` with or without an
LLM), waiting after each answer until the turn's notes are written; the answers, the recalled
panel and *My memory* are saved as text and screenshots.

    .venv/bin/python bench/live_first_hour.py http://127.0.0.1:8123 OUT_FOLDER

Writes OUT_FOLDER/first_hour.json (per turn: the answer, its status, seconds to the answer,
seconds until My memory changed (the turn's notes written), the recalled panel's text) and
first-hour-{chat,memory}.png. Needs Debian's chromium (``make browser``).
"""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"
PASSWORD = "legalmem-demo"
#: (what alice types, how long to wait for My memory to change after the answer: the turn's
#: notes written — a question may rightly write none)
TURNS = [
    ("林晓雯的押金是2000元，房东说要扣一半。", 600),
    ("刚才说错了，押金是3000不是2000。", 600),
    ("林晓雯的押金是多少？", 180),
]
ANSWER_WAIT_MS = 900_000


def wait_for_answer(page, count: int) -> str:
    """Wait until the ``count``-th assistant message is no longer streaming; its class."""
    page.wait_for_function(
        """(n) => { const a = document.querySelectorAll('#messages li.assistant');
                    return a.length >= n && !/streaming|pending|waiting/.test(a[n - 1].className)
                           && a[n - 1].querySelector('.body').innerText.trim().length > 0; }""",
        arg=count, timeout=ANSWER_WAIT_MS)
    return page.locator("#messages li.assistant").nth(count - 1).get_attribute("class") or ""


def memory_text(memory_page, base: str) -> str:
    memory_page.goto(f"{base}/memory/")
    return memory_page.locator("main").inner_text()


def main(base: str, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    record: list[dict] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-dev-shm-usage"])
        context = browser.new_context(locale="zh-CN", viewport={"width": 1400, "height": 1000})
        page = context.new_page()
        page.goto(f"{base}/accounts/login/?next=/chat/")
        page.fill("input[name=username]", "alice")
        page.fill("input[name=password]", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{base}/chat/")
        memory_page = context.new_page()
        for number, (text, wait) in enumerate(TURNS, start=1):
            before = memory_text(memory_page, base)
            started = time.perf_counter()
            page.fill("#question", text)
            page.click("#send")
            status = wait_for_answer(page, number)
            answered = round(time.perf_counter() - started, 1)
            answer = page.locator("#messages li.assistant .body").nth(number - 1).inner_text()
            recalled = page.locator("#recalled").inner_text()
            noted = None
            while time.perf_counter() - started < wait:
                if memory_text(memory_page, base) != before:
                    noted = round(time.perf_counter() - started, 1)
                    time.sleep(5)  # the rest of the turn's decisions
                    break
                time.sleep(5)
            entry = {"typed": text, "status": status, "seconds_to_answer": answered, "answer": answer,
                     "recalled": recalled, "seconds_until_noted": noted}
            record.append(entry)
            print(json.dumps(entry, ensure_ascii=False), flush=True)
            page.screenshot(path=str(out / f"first-hour-chat-{number}.png"), full_page=True)
        time.sleep(5)
        memory = memory_text(memory_page, base)
        memory_page.screenshot(path=str(out / "first-hour-memory.png"), full_page=True)
        browser.close()
    (out / "first_hour.json").write_text(json.dumps({"turns": record, "my_memory": memory}, ensure_ascii=False,
                                                    indent=1), encoding="utf-8")
    print(memory)


if __name__ == "__main__":
    main(sys.argv[1].rstrip("/"), Path(sys.argv[2]))
