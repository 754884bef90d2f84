"""Issue 50's first hour, live (not in CI): alice, in a real browser against a running product
(``make run``, offline engine or an LLM), relays an 8-turn consultation about a deposit to the
deposit matter — the amount, its correction, a broker's name and phone, a wish, a plan, the
recall question and a question about something never said — then uploads a 3-page lease PDF
(a Chinese text layer; its 第八条 runs across a line break into a negating tail) and asks
about it. After each answer it waits until the turn's notes are written.

    .venv/bin/python bench/live_first_hour.py http://127.0.0.1:8123 OUT_FOLDER [MATTER_NUMBER] [--documents-only]

Writes OUT_FOLDER/first_hour.json (per turn: what was typed, the answer, its status, seconds
to the answer and until My memory changed, the recalled panel's text; then My memory's text)
and screenshots first-hour-chat-N.png, first-hour-memory.png, first-hour-documents.png.
MATTER_NUMBER (default M-002) is the matter the chat and the upload use; ``--documents-only``
skips the conversation (a second run on the same matter). Needs Debian's
chromium (``make browser fonts``).
"""
from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a script from the checkout
from tests.documents.files import chinese_text_pdf  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
PASSWORD = "legalmem-demo"
#: (what alice types, how long to wait for My memory to change after the answer: the turn's
#: notes written — a question may rightly write none)
TURNS = [
    ("我的客户林晓雯租了周建国的房子，押金是2000元，今年2月底退租了，房东说要扣一半押金。", 600),
    ("刚才说错了，押金是3000不是2000。", 600),
    ("帮她找房的中介叫王磊，是链家的经纪人。", 600),
    ("王磊的手机是139 0571 2846。", 600),
    ("林晓雯还想主张迟延退还押金的利息。", 600),
    ("我打算先给房东发一封律师函。", 600),
    ("林晓雯的押金是多少？", 120),
    ("林晓雯的车牌号是多少？", 120),
]
#: After the upload: a question the lease answers.
DOCUMENT_QUESTION = ("租赁合同第八条对墙面污渍是怎么约定的？", 120)
#: The lease: three pages of lines; 第八条 runs across a line break into its negating tail, and
#: 第五条 across the page break.
LEASE_PAGES = [
    ["房屋租赁合同", "出租方（甲方）：周建国", "承租方（乙方）：林晓雯",
     "第一条 甲方将位于杭州市西湖区文三路188号2幢301室的房屋出租给乙方居住使用。",
     "第二条 租赁期限自2025年3月1日起至2026年2月28日止。",
     "第三条 月租金为人民币4200元，乙方应于每月5日前支付当月租金。",
     "第四条 乙方应于签订本合同时向甲方支付押金人民币3000元。",
     "第五条 租赁期满乙方交还房屋且无欠费的，甲方应于乙方交还房屋之日起十日内"],
    ["无息退还全部押金。",
     "第六条 乙方应合理使用房屋及其附属设施，因乙方使用不当造成损坏的，",
     "乙方应负责修复或赔偿。",
     "第七条 甲方应负责房屋主体结构及设施的正常维修。",
     "第八条 房屋的自然损耗及正常使用产生的墙面污渍，",
     "不属于乙方应当赔偿的损失范围。"],
    ["第九条 任何一方违反本合同约定的，应向对方支付违约金人民币2000元。",
     "第十条 本合同自双方签字之日起生效，一式两份，甲乙双方各执一份。",
     "甲方（签字）：周建国", "乙方（签字）：林晓雯", "签订日期：2025年2月20日"],
]
ANSWER_WAIT_MS = 900_000
INDEX_WAIT_SECONDS = 300


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


def ask(page, memory_page, base: str, number: int, text: str, wait: int, out: Path) -> dict:
    """Type ``text``, wait for the answer and for the turn's notes; one screenshot."""
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
    page.screenshot(path=str(out / f"first-hour-chat-{number}.png"), full_page=True)
    entry = {"typed": text, "status": status, "seconds_to_answer": answered, "answer": answer,
             "recalled": recalled, "seconds_until_noted": noted}
    print(json.dumps(entry, ensure_ascii=False), flush=True)
    return entry


def upload_lease(page, base: str, matter_id: str, out: Path) -> dict:
    """Upload the lease to the matter and wait until the worker has indexed it."""
    with tempfile.TemporaryDirectory() as folder:
        lease = Path(folder) / "lease.pdf"  # the file name is not the title: the title is read
        lease.write_bytes(chinese_text_pdf(LEASE_PAGES))
        page.goto(f"{base}/matters/{matter_id}/documents/")
        page.set_input_files("#document-upload input[type=file]", str(lease))
        page.click("#document-upload button[type=submit]")
        started = time.perf_counter()
        status = ""
        page.wait_for_timeout(2000)  # the upload's request
        while time.perf_counter() - started < INDEX_WAIT_SECONDS:
            time.sleep(3)
            page.goto(f"{base}/matters/{matter_id}/documents/")  # the page reloads itself while busy
            rows = page.locator("tr[data-document]")
            status = rows.first.get_attribute("data-status") if rows.count() else ""
            if status in ("indexed", "failed"):
                break
    page.screenshot(path=str(out / "first-hour-documents.png"), full_page=True)
    entry = {"uploaded": "lease.pdf", "status": status, "seconds_to_index": round(time.perf_counter() - started, 1),
             "documents_page": page.locator("main").inner_text()}
    print(json.dumps(entry, ensure_ascii=False), flush=True)
    return entry


def main(base: str, out: Path, matter_number: str = "M-002", documents_only: bool = False) -> None:
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
        option = page.locator("#matter option", has_text=matter_number)
        matter_id = option.get_attribute("value")
        page.select_option("#matter", matter_id)
        memory_page = context.new_page()
        turns = [] if documents_only else TURNS
        for number, (text, wait) in enumerate(turns, start=1):
            record.append(ask(page, memory_page, base, number, text, wait, out))
        documents_page = context.new_page()
        record.append(upload_lease(documents_page, base, matter_id, out))
        time.sleep(10)  # the document's notes
        record.append(ask(page, memory_page, base, len(turns) + 1, *DOCUMENT_QUESTION, out))
        memory = memory_text(memory_page, base)
        memory_page.screenshot(path=str(out / "first-hour-memory.png"), full_page=True)
        browser.close()
    (out / "first_hour.json").write_text(json.dumps({"turns": record, "my_memory": memory}, ensure_ascii=False,
                                                    indent=1), encoding="utf-8")
    print(memory)


if __name__ == "__main__":
    main(sys.argv[1].rstrip("/"), Path(sys.argv[2]), *sys.argv[3:4], documents_only="--documents-only" in sys.argv)
