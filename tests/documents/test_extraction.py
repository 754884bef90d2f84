"""Files become documents: content-addressed storage, text per page with offsets, chunks at
paragraphs and headings with keyword terms and embeddings, OCR of scans, e-mail attachments,
and every bad input refused with its reason and nothing half-written."""
from __future__ import annotations

import io
from pathlib import Path

import pytest
from PIL import Image

from memory.models import AuditEvent, AuditLog
from documents.models import Document, DocumentChunk, DocumentPage
from documents.services import EmptyUpload, UploadTooLarge, file_path
from documents.ingest import process_document, retry_document, upload_document
from tests.documents.conftest import add_document
from tests.documents.files import (
    docx_bytes,
    eml_bytes,
    image_bytes,
    scan_image,
    scanned_pdf,
    text_pdf,
    zip_bomb_docx,
)

LEASE = [
    ["Lease Agreement", "", "Article 1 Parties", "Landlord: Zhang San. Tenant: Li Si, of Shanghai."],
    ["Article 3 Rent", "The monthly rent is RMB 8000, payable before the 5th day of each month.",
     "", "Article 4 Deposit", "The deposit is RMB 16000 and is returned within 30 days after the term."],
]


def stored_files(store: Path) -> list[Path]:
    return [p for p in store.rglob("*") if p.is_file()] if store.exists() else []


def test_a_text_pdf_is_pages_and_chunks_with_offsets_terms_and_embeddings(world, document_store):
    document = add_document(world.matter_deposit, "lease.pdf", text_pdf(LEASE), actor=world.alice)

    assert (document.status, document.kind, document.page_count, document.ocr_pages) == ("indexed", "pdf", 2, 0)
    assert file_path(document.sha256).read_bytes() == text_pdf(LEASE)
    page2 = DocumentPage.objects.get(document=document, number=2)
    assert "RMB 8000" in page2.text
    chunks = list(DocumentChunk.objects.filter(document=document).select_related("page"))
    assert chunks and all(c.page.text[c.start:c.end] == c.text for c in chunks)
    assert all(c.embedding is not None and c.search_text for c in chunks)
    rent = next(c for c in chunks if "8000" in c.text)
    assert (rent.page.number, rent.heading, rent.matter_id) == (2, "Article 3 Rent", world.matter_deposit.pk)
    deposit = next(c for c in chunks if "16000" in c.text)
    assert deposit.heading == "Article 4 Deposit" and deposit.pk != rent.pk  # a heading opens a chunk
    assert AuditLog.objects.filter(event_type=AuditEvent.DOCUMENT_UPLOADED, object_id=str(document.pk),
                                   actor=world.alice).exists()


def test_the_same_file_twice_is_one_copy_and_two_references(world, document_store):
    first = add_document(world.matter_deposit, "lease.pdf", text_pdf(LEASE))
    second = add_document(world.matter_laptop, "copy of lease.pdf", text_pdf(LEASE))

    assert first.sha256 == second.sha256 and first.pk != second.pk
    assert stored_files(document_store) == [file_path(first.sha256)]


def test_a_scanned_pdf_is_read_by_ocr_in_chinese_and_english(world):
    document = add_document(world.matter_deposit, "scan.pdf",
                            scanned_pdf([["房屋租赁合同", "Termination notice: 30 days"]]))

    assert (document.status, document.page_count, document.ocr_pages) == ("indexed", 1, 1)
    text = document.pages.get().text
    assert "租赁合同" in text and "Termination" in text


def test_an_image_is_read_by_ocr(world):
    document = add_document(world.matter_deposit, "letter.png", image_bytes(scan_image(["律师函 押金应于三十日内返还"])))

    assert document.status == "indexed" and document.kind == "image"
    assert "押金" in document.pages.get().text


def test_a_docx_keeps_its_headings(world):
    document = add_document(world.matter_deposit, "judgment.docx", docx_bytes(
        "判决书", ["原告张三诉被告李四房屋租赁合同纠纷一案，本院依法审理。" * 3, "被告应于判决生效之日起十日内返还押金16000元。"]))

    assert document.status == "indexed" and document.kind == "docx"
    chunk = DocumentChunk.objects.filter(document=document, text__contains="16000").get()
    assert chunk.heading == "判决书"


def paged_docx() -> bytes:
    """A judgment as Word saves it: a hard page break after page 1 (and the rendered break Word
    writes right after it), a table on page 2, then a page Word's layout broke by itself."""
    import docx
    from docx.enum.text import WD_BREAK
    from docx.oxml import OxmlElement

    document = docx.Document()
    document.add_heading("民事判决书", level=1)
    document.add_paragraph("原告张三诉被告李四房屋租赁合同纠纷一案。").add_run().add_break(WD_BREAK.PAGE)
    rendered = document.add_paragraph()
    rendered.add_run()._r.append(OxmlElement("w:lastRenderedPageBreak"))
    rendered.add_run("本院查明：月租金8000元，押金16000元。")
    table = document.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text, table.rows[0].cells[1].text = "押金", "16000元"
    laid_out = document.add_paragraph("被告应于判决生效之日起十日内")
    laid_out.add_run()._r.append(OxmlElement("w:lastRenderedPageBreak"))
    laid_out.add_run("返还押金16000元。")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def test_a_docx_is_cut_into_the_pages_its_author_saw(world):
    document = add_document(world.matter_deposit, "judgment.docx", paged_docx())

    assert (document.status, document.page_count) == ("indexed", 3)
    pages = [page.text for page in DocumentPage.objects.filter(document=document).order_by("number")]
    assert pages[0] == "# 民事判决书\n\n原告张三诉被告李四房屋租赁合同纠纷一案。"
    assert pages[1] == "本院查明：月租金8000元，押金16000元。\n\n押金 | 16000元\n\n被告应于判决生效之日起十日内"
    assert pages[2] == "返还押金16000元。"
    chunk = DocumentChunk.objects.filter(document=document, text__contains="月租金8000元").get()
    assert chunk.page.number == 2 and document.citation(chunk.page.number) == "《民事判决书》第 2 页"  # its title, not "judgment"


def test_an_email_keeps_its_headers_and_its_attachments_become_documents(world):
    eml = eml_bytes(subject="押金退还 deposit refund", body="Dear client, the landlord refuses to return the deposit.",
                    attachments=[("notice.txt", "解除通知：合同于2026年3月31日解除。".encode("utf-8"), "text/plain")])
    document = add_document(world.matter_deposit, "thread.eml", eml)

    assert document.status == "indexed" and document.kind == "email"
    assert document.headers["Subject"] == "押金退还 deposit refund"
    assert "From: 王律师" in document.pages.get().text
    attachment = document.attachments.get()
    assert (attachment.filename, attachment.matter_id) == ("notice.txt", world.matter_deposit.pk)
    process_document(attachment.pk)
    attachment.refresh_from_db()
    assert attachment.status == "indexed" and "2026年3月31日" in attachment.pages.get().text


@pytest.mark.parametrize("filename,content", [
    ("notes.txt", "第一条 押金\n押金为一万六千元。".encode("gb18030")),
    ("notes.md", "# Deposit\n\nThe deposit is RMB 16000.".encode("utf-8")),
    ("notes.txt", "押金".encode("utf-16")),
])
def test_text_and_markdown_in_their_encodings(world, filename, content):
    document = add_document(world.matter_deposit, filename, content)

    assert document.status == "indexed" and document.kind == "text"
    assert "押金" in document.pages.get().text or "deposit" in document.pages.get().text


def _bomb_png() -> bytes:
    return image_bytes(Image.new("1", (9000, 9000), 1))


@pytest.mark.parametrize("filename,content,reason", [
    ("secret.pdf", text_pdf([["secret"]], encrypted=True), "encrypted"),
    ("broken.pdf", text_pdf(LEASE)[:300], "damaged or truncated"),
    ("lease.pdf", image_bytes(scan_image(["x"])), "the extension says .pdf but the content is a image file"),
    ("letter.docx", b"just text, not a zip", "not a file of that type"),
    ("tool.exe", b"MZ\x90\x00", "unsupported file type .exe"),
    ("bomb.docx", zip_bomb_docx(), "zip bomb"),
    ("bomb.png", _bomb_png(), "decompression bomb"),
    ("blank.png", image_bytes(Image.new("RGB", (800, 600), "white")), "no text found"),
    ("blank.pdf", scanned_pdf([[]]), "no text found"),
    ("old.txt", b"abc \x81\x30 \xff\xff def", "unknown text encoding"),
    ("binary.txt", b"text\x00with\x00nul", "NUL bytes"),
    ("truncated.docx", docx_bytes("x", ["y"])[:400], "damaged or truncated"),
])
def test_bad_input_fails_with_its_reason_and_leaves_nothing_half_written(world, filename, content, reason):
    document = add_document(world.matter_deposit, filename, content)

    assert document.status == "failed"
    assert reason in document.error
    assert not document.pages.exists() and not document.chunks.exists()
    assert AuditLog.objects.filter(event_type=AuditEvent.DOCUMENT_FAILED, object_id=str(document.pk)).exists()


def test_nul_bytes_inside_extracted_text_are_dropped(world):
    document = add_document(world.matter_deposit, "mail.eml",
                            eml_bytes(subject="nul", body="before\x00after the NUL byte in a mail body"))

    assert document.status == "indexed" and "beforeafter" in document.pages.get().text


def test_an_empty_file_and_a_file_over_the_limit_are_refused_before_anything_is_kept(world, settings, document_store):
    settings.DOCUMENT_MAX_UPLOAD_BYTES = 1000
    with pytest.raises(EmptyUpload):
        upload_document(actor=world.alice, matter=world.matter_deposit, stream=io.BytesIO(b""), filename="a.txt")
    with pytest.raises(UploadTooLarge):
        upload_document(actor=world.alice, matter=world.matter_deposit, stream=io.BytesIO(b"x" * 1001), filename="a.txt")

    assert not Document.objects.exists() and stored_files(document_store) == []


def test_a_failed_document_can_be_retried(world):
    document = add_document(world.matter_deposit, "lease.pdf", text_pdf(LEASE))
    path = file_path(document.sha256)
    content = path.read_bytes()
    document.pages.all().delete()
    Document.objects.filter(pk=document.pk).update(status="queued")  # as if uploaded, then the file went
    path.unlink()
    process_document(document.pk)
    document.refresh_from_db()
    assert document.status == "failed" and "missing" in document.error

    path.write_bytes(content)
    retry_document(document, actor=world.alice)
    assert document.status == "queued"
    process_document(document.pk)
    document.refresh_from_db()
    assert (document.status, document.error, document.attempts, document.page_count) == ("indexed", "", 3, 2)


def test_a_500_page_pdf_is_indexed_page_by_page(world):
    pages = [[f"Page {n} of the bundle", f"Exhibit {n}: invoice number INV-{n:04d} for RMB {n * 10}."] for n in range(1, 501)]
    document = add_document(world.matter_deposit, "bundle.pdf", text_pdf(pages))

    assert (document.status, document.page_count) == ("indexed", 500)
    chunk = DocumentChunk.objects.get(document=document, text__contains="INV-0321")
    assert chunk.page.number == 321
