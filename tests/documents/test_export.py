"""The matter export lists the matter's documents — title, file name, SHA-256, uploader, upload
time, status, page count — with each page's extracted text (JSON, the Markdown report and
``export_matter``); bob (walled off) and charlie (another firm) get a 404 for it."""
from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from documents.models import DocumentPage
from tests.clients import client_for
from tests.documents.conftest import add_document
from tests.documents.files import text_pdf
from tests.documents.test_extraction import LEASE

pytestmark = pytest.mark.django_db


def export_url(matter) -> str:
    return f"/api/memory/matters/{matter.pk}/export"


@pytest.fixture
def lease(world):
    return add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)


def test_the_json_export_lists_the_document_and_its_pages_text(world, lease):
    response = client_for(world.alice).get(export_url(world.matter_deposit), {"format": "json"})
    assert response.status_code == 200
    [exported] = response.json()["documents"]
    assert {key: exported[key] for key in ("title", "filename", "sha256", "uploaded_by", "status", "page_count")} == {
        "title": "房屋租赁合同", "filename": "房屋租赁合同.pdf", "sha256": lease.sha256, "uploaded_by": "alice",
        "status": "indexed", "page_count": 2}
    assert len(exported["sha256"]) == 64 and exported["uploaded_at"] == lease.uploaded_at.isoformat()
    pages = {page.number: page.text for page in DocumentPage.objects.filter(document=lease)}
    assert [(p["number"], p["text"]) for p in exported["pages"]] == sorted(pages.items())
    assert "RMB 8000" in exported["pages"][1]["text"] and "Zhang San" in exported["pages"][0]["text"]
    assert "file" not in exported and "content" not in exported  # the bytes are named by their hash only


def test_the_markdown_report_and_the_command_carry_the_documents(world, lease, tmp_path):
    report = client_for(world.alice).get(export_url(world.matter_deposit), {"format": "markdown"}).content.decode()
    assert "## Documents" in report and "### 房屋租赁合同" in report and lease.sha256 in report
    assert "Page 2:" in report and "> The monthly rent is RMB 8000" in report

    path = tmp_path / "deposit.json"
    call_command("export_matter", world.matter_deposit.reference, "--firm", world.firm_a.slug, "--user", "alice",
                 "--output", str(path))
    [exported] = json.loads(path.read_text(encoding="utf-8"))["documents"]
    assert exported["sha256"] == lease.sha256 and [p["number"] for p in exported["pages"]] == [1, 2]


def test_bob_and_charlie_get_404_for_the_export(world, lease):
    for user in (world.bob, world.charlie):
        for fmt in ("json", "markdown"):
            response = client_for(user).get(export_url(world.matter_deposit), {"format": fmt})
            assert response.status_code == 404
            assert lease.sha256 not in response.content.decode() and "RMB 8000" not in response.content.decode()
    # the matters they may export carry no document of the deposit matter
    assert client_for(world.bob).get(export_url(world.matter_laptop)).json()["documents"] == []
    assert client_for(world.charlie).get(export_url(world.matter_b)).json()["documents"] == []
