"""The documents over HTTP: upload (page and REST API, 413 over the limit), the viewer at a cited
page with the passage highlighted, the file, search with citations — behind the ethical wall
(bob and charlie get 404s), audited; ``import_documents``; erasure leaves nothing behind."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.utils import translation

from memory.models import AuditEvent, AuditLog
from documents.models import Document, DocumentChunk, DocumentPage
from documents.services import file_path
from records.erasure import erase, matter_unit
from documents.ingest import process_document
from tests.clients import client_for, logged_in
from tests.documents.conftest import add_document
from tests.documents.files import text_pdf
from tests.documents.test_extraction import LEASE


def test_alice_uploads_through_the_api_and_the_worker_indexes_it(world):
    client = client_for(world.alice)
    response = client.post(f"/api/matters/{world.matter_deposit.pk}/documents/",
                           {"file": SimpleUploadedFile("房屋租赁合同.pdf", text_pdf(LEASE), "application/pdf")},
                           format="multipart")
    assert response.status_code == 202, response.content
    [created] = response.json()
    assert (created["status"], created["title"], created["uploaded_by"]) == ("queued", "房屋租赁合同", "alice")

    process_document(created["id"])
    detail = client.get(f"/api/documents/{created['id']}/").json()
    assert (detail["status"], detail["page_count"]) == ("indexed", 2)
    listed = client.get(f"/api/matters/{world.matter_deposit.pk}/documents/").json()
    assert [d["id"] for d in listed] == [created["id"]]


def test_search_cites_the_page_and_the_viewer_highlights_the_passage(world):
    document = add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)
    client = client_for(world.alice)

    results = client.get("/api/documents/search/", {"q": "monthly rent payable", "matter": world.matter_deposit.pk}).json()["results"]
    top = results[0]
    assert top["citation"] == "《房屋租赁合同》第 2 页" and "RMB 8000" in top["text"]
    page = DocumentPage.objects.get(document=document, number=2)
    assert page.text[top["start"]:top["end"]] == top["text"]

    viewer = logged_in(world.alice).get(top["url"])
    assert viewer.status_code == 200
    html = viewer.content.decode()
    assert "《房屋租赁合同》第 2 页" in html and '<mark id="passage">' in html and "RMB 8000" in html
    assert AuditLog.objects.filter(event_type=AuditEvent.DOCUMENT_VIEWED, object_id=str(document.pk),
                                   actor=world.alice).exists()


def test_the_file_downloads_as_uploaded_and_is_audited(world):
    document = add_document(world.matter_deposit, "lease.pdf", text_pdf(LEASE))
    response = logged_in(world.alice).get(f"/documents/{document.pk}/file")

    assert response.status_code == 200 and b"".join(response.streaming_content) == text_pdf(LEASE)
    assert AuditLog.objects.filter(event_type=AuditEvent.DOCUMENT_DOWNLOADED, object_id=str(document.pk)).exists()


@pytest.mark.parametrize("who", ["bob", "charlie"])
def test_users_not_on_the_matter_get_404_for_everything_of_the_document(world, who):
    document = add_document(world.matter_deposit, "lease.pdf", text_pdf(LEASE))
    user = getattr(world, who)
    page, api = logged_in(user), client_for(user)

    for url in (f"/documents/{document.pk}/", f"/documents/{document.pk}/?page=2", f"/documents/{document.pk}/file",
                f"/matters/{world.matter_deposit.pk}/documents/"):
        assert page.get(url).status_code == 404, url
    assert page.post(f"/documents/{document.pk}/retry").status_code == 404
    assert api.get(f"/api/documents/{document.pk}/").status_code == 404
    assert api.get(f"/api/matters/{world.matter_deposit.pk}/documents/").status_code == 404
    assert api.post(f"/api/matters/{world.matter_deposit.pk}/documents/",
                    {"file": SimpleUploadedFile("x.txt", b"hello")}, format="multipart").status_code == 404
    assert api.get("/api/documents/search/", {"q": "monthly rent"}).json()["results"] == []
    assert not AuditLog.objects.filter(event_type=AuditEvent.DOCUMENT_VIEWED).exists()


def test_the_documents_page_lists_only_assigned_matters(world):
    html = logged_in(world.bob).get("/documents/").content.decode()
    assert world.matter_laptop.title in html and world.matter_deposit.title not in html
    assert world.matter_deposit.title not in logged_in(world.charlie).get("/documents/").content.decode()


def test_bob_sees_the_documents_of_his_own_matter(world):
    document = add_document(world.matter_laptop, "invoice.txt", "Invoice: laptop screen repair RMB 1200".encode())

    assert logged_in(world.bob).get(f"/documents/{document.pk}/").status_code == 200
    results = client_for(world.bob).get("/api/documents/search/", {"q": "laptop screen repair"}).json()["results"]
    assert [r["document_id"] for r in results] == [document.pk]


def test_an_upload_over_the_configured_limit_is_a_413_and_keeps_nothing(world, settings, document_store):
    settings.DOCUMENT_MAX_UPLOAD_BYTES = 200 * 1024
    big = SimpleUploadedFile("big.txt", b"a" * (300 * 1024))

    api = client_for(world.alice).post(f"/api/matters/{world.matter_deposit.pk}/documents/", {"file": big},
                                       format="multipart")
    assert api.status_code == 413
    big.seek(0)
    page = logged_in(world.alice).post(f"/matters/{world.matter_deposit.pk}/documents/", {"file": big})
    assert page.status_code == 413
    assert not Document.objects.exists()
    assert not [p for p in Path(document_store).rglob("*") if p.is_file()] if Path(document_store).exists() else True


def test_the_matter_page_uploads_lists_and_offers_retry(world):
    client = logged_in(world.alice)
    response = client.post(f"/matters/{world.matter_deposit.pk}/documents/",
                           {"file": SimpleUploadedFile("bad.pdf", b"not a pdf at all")})
    assert response.status_code == 302
    document = Document.objects.get()
    process_document(document.pk)

    html = client.get(f"/matters/{world.matter_deposit.pk}/documents/").content.decode()
    assert "bad" in html and f"/documents/{document.pk}/retry" in html
    assert "文件扩展名为 .pdf，但文件内容并非该类型" in html  # the reason, in the reader's language
    document.refresh_from_db()
    assert "the extension says .pdf" in document.error  # … stored as the worker wrote it
    english = Client(HTTP_ACCEPT_LANGUAGE="en")
    english.force_login(world.alice)
    assert "ends in .pdf but the content is not a file of that type" in english.get(
        f"/matters/{world.matter_deposit.pk}/documents/").content.decode()
    assert client.post(f"/documents/{document.pk}/retry").status_code == 302
    document.refresh_from_db()
    assert document.status == "queued"


@translation.override("en")  # asserts the command's English output
def test_import_documents_command(world, tmp_path):
    (tmp_path / "lease.pdf").write_bytes(text_pdf(LEASE))
    (tmp_path / "notes.md").write_text("# Deposit\n\nThe deposit is RMB 16000.", encoding="utf-8")
    out = io.StringIO()
    call_command("import_documents", str(tmp_path / "lease.pdf"), str(tmp_path / "notes.md"),
                 "--matter", world.matter_deposit.reference, "--user", "alice", stdout=out)

    assert out.getvalue().count(" indexed") == 2
    assert set(Document.objects.values_list("status", "uploaded_by__username")) == {("indexed", "alice")}
    (tmp_path / "bad.pdf").write_bytes(b"nope")
    with pytest.raises(CommandError, match="1 of 1 files failed"):
        call_command("import_documents", str(tmp_path / "bad.pdf"), "--matter", world.matter_deposit.reference,
                     stdout=io.StringIO(), stderr=io.StringIO())


def _database_holds(text: str) -> list[str]:
    """Every table of the database, read row by row as text: which ones hold ``text``."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        tables = [row[0] for row in cursor.fetchall()]
        found = []
        for table in tables:
            cursor.execute(f'SELECT 1 FROM "{table}" t WHERE t::text LIKE %s LIMIT 1', [f"%{text}%"])
            if cursor.fetchone():
                found.append(table)
    return found


def test_erasing_the_matter_leaves_no_file_page_chunk_or_trace(world, document_store, django_capture_on_commit_callbacks):
    unique = "ZQXJ7731 Unique Clause"
    kept = add_document(world.matter_laptop, "shared.pdf", text_pdf(LEASE))  # the same bytes on another matter
    add_document(world.matter_deposit, "shared.pdf", text_pdf(LEASE))
    secret = add_document(world.matter_deposit, "secret.pdf", text_pdf([[unique, "Rent is RMB 9999."]]))
    assert _database_holds(unique)

    with django_capture_on_commit_callbacks(execute=True):
        result = erase(matter_unit(world.matter_deposit), actor=world.alice, reason="client asked")

    assert result.counts["documents"] == 2
    assert not Document.objects.filter(matter=world.matter_deposit).exists()
    assert not DocumentChunk.objects.filter(matter=world.matter_deposit).exists()
    assert not file_path(secret.sha256).exists() and file_path(kept.sha256).exists()
    assert _database_holds(unique) == []
    for path in Path(document_store).rglob("*"):
        if path.is_file():
            assert unique.encode() not in path.read_bytes()


@pytest.mark.subprocess
def test_backup_and_restore_carry_the_stored_files(world, document_store, tmp_path):
    import os

    from psycopg.conninfo import make_conninfo

    from legalmem_site.backup import create_backup, restore_backup

    document = add_document(world.matter_deposit, "lease.pdf", text_pdf(LEASE))
    url = make_conninfo(os.environ["DATABASE_URL"], dbname=connection.settings_dict["NAME"])
    archive = tmp_path / "backup.tar"
    manifest = create_backup(url, archive, secret_key=None, documents=Path(document_store))
    assert manifest["document_files"] == 1

    target = tmp_path / "new-data"
    database = restore_backup(archive, target)
    try:
        restored = target / "documents" / document.sha256[:2] / document.sha256
        assert restored.read_bytes() == text_pdf(LEASE)
    finally:
        database.server.cleanup()
