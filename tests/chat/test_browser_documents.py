"""A matter's documents in a real browser (issue 32): alice uploads a lease to the deposit
matter, asks about its rent clause, sees the citation 《房屋租赁合同》第 2 页 in the recalled
panel and opens the page with the passage highlighted; bob (not on the matter) gets a 404 for
the document's URL; charlie (another firm) sees nothing of it."""
from __future__ import annotations

import threading

import pytest
from django.db import connection
from playwright.sync_api import expect

from documents.ingest import process_document
from tests.documents.files import text_pdf
from tests.documents.test_extraction import LEASE
from tests.factories import PASSWORD
from tests.fake_llm.replies import text_reply

pytestmark = pytest.mark.browser


def _in_a_thread(function, *args) -> None:
    """ORM work while Playwright's event loop owns this thread (Django refuses it here)."""
    def run() -> None:
        try:
            function(*args)
        finally:
            connection.close()  # the thread's own connection: the test database can be dropped

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()


def _log_in(page, server: str, username: str, next_url: str) -> None:
    page.context.clear_cookies()
    page.goto(f"{server}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{server}{next_url}")


def test_alice_uploads_asks_and_opens_the_cited_page_bob_gets_404_charlie_sees_nothing(
        world, asgi_server, fake_llm, page, tmp_path):
    fake_llm.script(text_reply("月租金为人民币8000元，每月5日前支付（《房屋租赁合同》第 2 页）。"))
    lease = tmp_path / "房屋租赁合同.pdf"
    lease.write_bytes(text_pdf(LEASE))
    documents_url = f"/matters/{world.matter_deposit.pk}/documents/"

    _log_in(page, asgi_server, "alice", documents_url)
    page.set_input_files("#document-upload input[type=file]", str(lease))
    page.click("#document-upload button[type=submit]")
    row = page.locator("tr[data-document]")
    expect(row).to_have_count(1)
    document_id = int(row.get_attribute("data-document"))
    _in_a_thread(process_document, document_id)  # what the worker does
    page.reload()
    expect(page.locator("tr[data-document]")).to_have_attribute("data-status", "indexed")

    page.goto(f"{asgi_server}/chat/")
    page.select_option("#matter", str(world.matter_deposit.pk))
    page.fill("#question", "What is the monthly rent and when is it payable?")
    page.click("#send")
    citation = page.locator("#recalled a.citation", has_text="《房屋租赁合同》第 2 页").first
    expect(citation).to_be_visible(timeout=30_000)  # the first recall loads the embedding model
    with page.context.expect_page() as opened:
        citation.click()
    viewer = opened.value
    expect(viewer.locator("#citation")).to_contain_text("《房屋租赁合同》第 2 页")
    expect(viewer.locator("mark#passage")).to_contain_text("RMB 8000")
    viewer.close()

    _log_in(page, asgi_server, "bob", "/documents/")
    for url in (f"/documents/{document_id}/", f"/documents/{document_id}/file", documents_url):
        assert page.goto(f"{asgi_server}{url}").status == 404, url

    _log_in(page, asgi_server, "charlie", "/documents/")
    expect(page.locator("main")).not_to_contain_text(world.matter_deposit.title)
    assert page.goto(f"{asgi_server}/documents/{document_id}/").status == 404
    search = page.goto(f"{asgi_server}/api/documents/search/?q=monthly+rent&format=json")
    assert search.status == 200 and search.json()["results"] == []
