"""Recall over a matter's documents with gold page ids (docs/documents.md, "Evaluation").

Three clients, each a matter with four documents made here with the same builders as the tests:
a lease (a 3-page text PDF), a judgment (DOCX), an e-mail thread (.eml) and a scanned letter
(PNG, read by OCR). Each question names the document and page that answer it. For every
question the script asks, as the matter's lawyer:

- ``documents`` — ``recall.search_documents`` (keyword + dense over the chunks, fused);
- ``dense`` and ``bm25`` — the raw baselines over the same chunks: cosine distance alone and
  PostgreSQL full-text rank alone;
- ``notes`` — ``recall.search_memory`` (layered) over the notes the write path made from the
  documents, a hit counting when its provenance names the gold page;

and reports recall@1, @3 and @10 (the gold page among the first hits) and MRR per source; a
hit is a (document, page) pair, so two chunks of one page count once at the first. Turns are not in this
set (no chat happened): the turn figures are docs/evaluation.md's.

Run: ``LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell -c
"from bench.eval_documents import main; main()"``. Writes a firm of its own into the data
folder's database.
"""
from __future__ import annotations

import io
import time

from django.contrib.auth import get_user_model

from memory.models import Firm, Matter, MatterAssignment, Membership
from documents.models import DocumentChunk
from recall import search_memory
from documents.search import document_rankings, search_documents
from documents.ingest import process_document, upload_document
from tests.documents.files import docx_bytes, eml_bytes, image_bytes, scan_image, text_pdf

K = 10
CUTS = (1, 3, 10)

CLIENTS = [
    {"name": "张三", "tenant_en": "Zhang San", "landlord": "Wang Wu", "rent": 8000, "deposit": 16000, "city": "Shanghai",
     "court": "上海市徐汇区人民法院", "notice_days": 30, "bank": "ICBC"},
    {"name": "李四", "tenant_en": "Li Si", "landlord": "Zhao Liu", "rent": 6500, "deposit": 13000, "city": "Beijing",
     "court": "北京市朝阳区人民法院", "notice_days": 60, "bank": "CMB"},
    {"name": "王芳", "tenant_en": "Wang Fang", "landlord": "Sun Qi", "rent": 12000, "deposit": 24000, "city": "Shenzhen",
     "court": "深圳市南山区人民法院", "notice_days": 90, "bank": "BOC"},
]


def _documents(c: dict) -> dict[str, tuple[str, bytes]]:
    lease = text_pdf([
        ["Lease Agreement", "", "Article 1 Parties",
         f"Landlord: {c['landlord']}. Tenant: {c['tenant_en']}, residing in {c['city']}."],
        ["Article 3 Rent", f"The monthly rent is RMB {c['rent']}, payable before the 5th day of each month "
         f"to the landlord's {c['bank']} account.", "", "Article 4 Deposit",
         f"The deposit is RMB {c['deposit']} and is returned within 30 days after the term ends."],
        ["Article 9 Termination", f"Either party may terminate with {c['notice_days']} days written notice.",
         "", "Article 11 Disputes", f"Disputes are submitted to the court where the premises lie, {c['city']}."],
    ])
    judgment = docx_bytes("民事判决书", [
        f"原告{c['name']}诉被告{c['landlord']}房屋租赁合同纠纷一案，{c['court']}依法审理。",
        f"本院认为，被告应于判决生效之日起十日内返还原告押金{c['deposit']}元。",
        "案件受理费由被告负担。",
    ])
    thread = eml_bytes(subject=f"{c['name']} 押金退还", body=(
        f"{c['name']}您好：\n\n房东{c['landlord']}昨天回复说，要等房屋检查后才退押金，并称墙面有损坏。"
        "\n\n我们建议先拍照留证，并在三日内书面回复。\n\n王律师"))
    letter = image_bytes(scan_image([f"律师函 致{c['landlord']}", f"请于七日内返还押金{c['deposit']}元",
                                     "Overdue interest will be claimed."], size=(1240, 360)))
    return {"lease": ("房屋租赁合同.pdf", lease), "judgment": ("民事判决书.docx", judgment),
            "thread": ("押金退还.eml", thread), "letter": ("律师函.png", letter)}


def _questions(c: dict, *, named: bool) -> list[tuple[str, str, int]]:
    """The questions; ``named``: each names the client (asked across every matter at once)."""
    en, zh = (f"{c['tenant_en']}'s ", f"{c['name']}的") if named else ("the ", "")
    return [
        (f"What is {en}monthly rent and when is it payable?", "lease", 2),
        (f"How much notice is needed to terminate {en}lease?", "lease", 3),
        (f"Which court handles disputes under {en}lease?", "lease", 3),
        (f"Who is the landlord of {en}lease?", "lease", 1),
        (f"{zh}案件法院判决被告返还多少押金？", "judgment", 1),
        (f"{zh}房东为什么不退押金？", "thread", 1),
        (f"{zh}律师函要求几日内返还押金？", "letter", 1),
        (f"{zh}案件受理费由谁负担？", "judgment", 1),
    ]


def _page_hits(chunk_ids: list[int]) -> list[tuple[int, int]]:
    pages = dict(DocumentChunk.objects.filter(pk__in=chunk_ids).values_list("pk", "document_id"))
    numbers = dict(DocumentChunk.objects.filter(pk__in=chunk_ids).values_list("pk", "page__number"))
    return [(pages[c], numbers[c]) for c in chunk_ids if c in pages]


def main() -> None:
    stamp = time.strftime("%Y%m%d%H%M%S")
    firm = Firm.objects.create(name=f"eval documents {stamp}", slug=f"eval-documents-{stamp}")
    partner = get_user_model().objects.create_user(username=f"eval-documents-{stamp}-partner")
    Membership.objects.create(user=partner, firm=firm)
    asked = []  # (user, matter id or None, question, gold)
    for index, client in enumerate(CLIENTS):
        lawyer = get_user_model().objects.create_user(username=f"eval-documents-{stamp}-{index}")
        Membership.objects.create(user=lawyer, firm=firm)
        matter = Matter.objects.create(firm=firm, title=f"{client['name']} 押金纠纷", reference=f"E-{stamp}-{index}")
        MatterAssignment.objects.create(matter=matter, user=lawyer)
        MatterAssignment.objects.create(matter=matter, user=partner)  # sees every client's matter
        ids = {}
        for key, (filename, content) in _documents(client).items():
            document = upload_document(actor=lawyer, matter=matter, stream=io.BytesIO(content), filename=filename,
                                       enqueue=False)
            assert process_document(document.pk) == "indexed", (filename, document.pk)
            ids[key] = document.pk
        asked += [(lawyer, matter.pk, q, (ids[key], page)) for q, key, page in _questions(client, named=False)]
        asked += [(partner, None, q, (ids[key], page)) for q, key, page in _questions(client, named=True)]
    for label, who in (("one matter (its lawyer)", "lawyer"), ("all three matters (a partner, client named)", "partner")):
        _report(label, [a for a in asked if (a[1] is None) == (who == "partner")], firm)


def _report(label: str, asked: list, firm: Firm) -> None:
    sources = ("documents", "dense", "bm25", "notes")
    hits = {(source, cut): 0 for source in sources for cut in CUTS}
    reciprocal = {source: 0.0 for source in sources}
    total = 0
    for user, matter_id, question, gold in asked:
        total += 1
        fused = [(h.document_id, h.page) for h in search_documents(user, question, matter_id=matter_id, limit=K)]
        keyword_ids, dense_ids = document_rankings(user, question, matter_id=matter_id)
        dense = _page_hits(dense_ids[:K])
        bm25 = _page_hits(keyword_ids[:K])
        notes = []
        for hit in search_memory(user, question, k=K, matter_id=matter_id).hits:
            if hit.note is not None and hit.note.document_url():
                _, doc, page_id, _ = hit.note.source_id.split(":")
                notes.append((int(doc), int(page_id[1:])))
        for source, found in (("documents", fused), ("dense", dense), ("bm25", bm25), ("notes", notes)):
            found = list(dict.fromkeys(found))  # a page once, at its first place
            for cut in CUTS:
                hits[(source, cut)] += gold in found[:cut]
            if gold in found:
                reciprocal[source] += 1.0 / (found.index(gold) + 1)
    chunk_count = DocumentChunk.objects.filter(matter__firm=firm).count()
    print(f"{label}: {len(CLIENTS)} clients, {total} questions with gold pages, {chunk_count} chunks")
    print("source      " + "  ".join(f"R@{cut:<3d}" for cut in CUTS) + "  MRR")
    for source in sources:
        print(f"{source:10s}  " + "  ".join(f"{hits[(source, cut)] / total:.3f}" for cut in CUTS)
              + f"  {reciprocal[source] / total:.3f}")
