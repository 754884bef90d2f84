"""Documents into memory: pages/s of text PDFs and of OCR, end to end through the worker's job,
and the ratio to the encoding floor of the same chunks (docs/documents.md, "Speed").

- a 300-page text PDF (``BENCH_DOC_PAGES``): upload + ``process_document`` (pdfium text, chunks,
  keyword terms, embeddings, one transaction of rows) — pages/s and chunks/s; the floor is
  ``embed_passages`` of the same chunk texts alone, in the same batches, right after; then the
  notes the write path makes from its first chunks (offline engine), timed apart;
- a scanned PDF of ``BENCH_OCR_PAGES`` pages (A4 at 100 dpi, Chinese and English lines): OCR
  pages/s end to end, and its ratio to the same encoding floor.

Run: ``LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell -c
"from bench.bench_documents import main; main()"``. Writes into the data folder's database (a
firm of its own, ``bench-documents-<time>``).
"""
from __future__ import annotations

import io
import os
import time

from django.contrib.auth import get_user_model

from infra.embeddings import get_embedder
from memory.models import Firm, Matter, MatterAssignment, Membership
from documents.models import Document, DocumentChunk
from documents.ingest import process_document, upload_document
from documents.ingest import DOCUMENT_EMBED_BATCH
from remember.documents.notes import remember_document
from tests.documents.files import scanned_pdf, text_pdf

PAGES = int(os.environ.get("BENCH_DOC_PAGES", "300"))
OCR_PAGES = int(os.environ.get("BENCH_OCR_PAGES", "10"))


def _page(n: int) -> list[str]:
    return [f"Article {n} Obligations of the parties",
            f"The tenant shall pay the rent of RMB {8000 + n} before the {n % 28 + 1}th day of each month.",
            "Late payment bears interest at 0.05 percent per day from the due date until paid in full.",
            "",
            f"{n}.2 Notices",
            f"Any notice under clause {n} shall be in writing and delivered to the address stated above.",
            "A notice by e-mail is effective on the day it is sent, unless the sender receives a bounce."]


def _floor(document: Document) -> float:
    texts = [(c.heading + "\n" + c.text).strip() for c in DocumentChunk.objects.filter(document=document)]
    embedder = get_embedder()
    started = time.perf_counter()
    for offset in range(0, len(texts), DOCUMENT_EMBED_BATCH):
        embedder.embed_passages(texts[offset:offset + DOCUMENT_EMBED_BATCH])
    return time.perf_counter() - started


def _run(matter: Matter, filename: str, content: bytes) -> tuple[Document, float]:
    started = time.perf_counter()
    document = upload_document(actor="system:bench", matter=matter, stream=io.BytesIO(content), filename=filename,
                               enqueue=False)
    process_document(document.pk)
    elapsed = time.perf_counter() - started
    document.refresh_from_db()
    assert document.status == Document.Status.INDEXED, document.error
    return document, elapsed


def main() -> None:
    stamp = time.strftime("%Y%m%d%H%M%S")
    firm = Firm.objects.create(name=f"bench documents {stamp}", slug=f"bench-documents-{stamp}")
    user = get_user_model().objects.create_user(username=f"bench-documents-{stamp}")
    Membership.objects.create(user=user, firm=firm)
    matter = Matter.objects.create(firm=firm, title="bench", reference=f"B-{stamp}")
    MatterAssignment.objects.create(matter=matter, user=user)
    get_embedder().embed_passages(["warm up"])

    document, elapsed = _run(matter, "bundle.pdf", text_pdf([_page(n) for n in range(1, PAGES + 1)]))
    chunks = document.chunks.count()
    floor = _floor(document)
    print(f"text PDF, {PAGES} pages, {chunks} chunks: {elapsed:.1f} s end to end = {PAGES / elapsed:.1f} pages/s, "
          f"{chunks / elapsed:.1f} chunks/s; encoding floor {floor:.1f} s; ratio {elapsed / floor:.2f}")
    document.uploaded_by_id = user.pk
    started = time.perf_counter()
    routed = remember_document(document)
    notes_elapsed = time.perf_counter() - started
    print(f"notes from its first chunks (offline engine): {routed} items routed in {notes_elapsed:.1f} s")

    scan = scanned_pdf([[f"第{n}页 房屋租赁合同 补充条款", f"Page {n}: the deposit of RMB 16000 is returned within 30 days.",
                         "租金每月八千元，于每月五日前支付。"] for n in range(1, OCR_PAGES + 1)])
    document, elapsed = _run(matter, "scan.pdf", scan)
    floor = _floor(document)
    print(f"scanned PDF (OCR), {OCR_PAGES} pages: {elapsed:.1f} s end to end = {OCR_PAGES / elapsed:.2f} pages/s; "
          f"encoding floor {floor:.2f} s; ratio {elapsed / floor:.1f}")
    print(f"load average {os.getloadavg()[0]:.2f}")
