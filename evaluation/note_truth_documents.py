"""The note-truth set's documents (issue 50 item 5): each is stored with its pages as written
(``restore_document``: chunks and embeddings made here) in a matter of the uploader, then read
for notes by the real write path (``remember_document``), and its notes are scored:

- the title read from the content, not the file name;
- contract terms filed as 法条 (law), target 0;
- terms with a negating tail ("…\\n不属于乙方应当赔偿的损失范围") whose note holds the head without
  the tail, target 0;
- terms noted whole (a note of the document holds the head's and the tail's tokens).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memory.models import Category, Note, SourceType
from documents.models import Document


@dataclass
class DocumentReport:
    documents: int = 0
    titles_right: int = 0
    terms: int = 0
    terms_whole: int = 0
    negating_terms: int = 0
    negations_cut: int = 0
    contract_notes: int = 0
    contract_notes_as_law: int = 0
    misses: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        return [
            f"  documents: title read from the content {self.titles_right}/{self.documents}",
            f"  contract terms noted whole (head and tail in one note): {self.terms_whole}/{self.terms}",
            f"  terms cut from their negating tail: {self.negations_cut} of {self.negating_terms}",
            f"  notes of contracts filed as 法条: {self.contract_notes_as_law} of {self.contract_notes}",
        ]


def import_documents(documents: list[dict[str, Any]], firm, users: dict[str, Any]) -> dict[str, Document]:
    """Each document in a matter of its uploader, read for notes as an upload would be."""
    from memory.services.tenancy import assign_user, create_matter
    from documents.ingest import restore_document
    from remember.documents.notes import remember_document

    stored: dict[str, Document] = {}
    for spec in documents:
        matter = create_matter(firm=firm, title=f"note truth {spec['id']}", reference=spec["id"], actor="system:eval")
        assign_user(matter=matter, user=users[spec["user"]], actor="system:eval")
        pages = [(text, False) for text in spec["pages"]]
        document = restore_document(actor=users[spec["user"]], matter=matter, content="\n".join(spec["pages"]).encode(),
                                    filename=spec["filename"], kind="text", pages=pages)
        remember_document(document)
        stored[spec["id"]] = document
    return stored


def score_documents(documents: list[dict[str, Any]], expected: dict[str, Any], stored: dict[str, Document],
                    report: DocumentReport) -> None:
    """Fill ``report`` from the notes made of ``stored`` (see the module docstring)."""
    for spec in documents:
        document = Document.objects.get(pk=stored[spec["id"]].pk)
        report.documents += 1
        if document.title == spec["title"]:
            report.titles_right += 1
        else:
            report.misses.append(f"title {spec['id']}: {document.title!r} (expected {spec['title']!r})")
    notes = list(Note.objects.filter(source_type=SourceType.DOCUMENT, status=Note.Status.ACTIVE,
                                     source_id__regex=r"^document:(%s):" % "|".join(
                                         str(d.pk) for d in stored.values())).values("content", "category", "source_id"))
    report.contract_notes += len(notes)
    report.contract_notes_as_law += sum(n["category"] == Category.LAW for n in notes)
    for n in notes:
        if n["category"] == Category.LAW:
            report.misses.append(f"filed as law: {n['content'][:60]}")
    for term in expected.get("terms", []):
        mine = [n for n in notes if n["source_id"].startswith(f"document:{stored[term['document']].pk}:")]
        head = [n for n in mine if all(t in n["content"] for t in term["head_tokens"])]
        whole = [n for n in head if all(t in n["content"] for t in term["tail_tokens"])]
        report.terms += 1
        report.terms_whole += bool(whole)
        if term["negating_tail"]:
            report.negating_terms += 1
            if head and not whole:
                report.negations_cut += 1
                report.misses.append(f"tail cut {term['id']} {term['article']}: {head[0]['content'][:70]}")
        if not whole:
            report.misses.append(f"term {term['id']} {term['article']} not noted whole")
