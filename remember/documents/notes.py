"""Notes from a matter's documents: the write path reads each chunk as it reads a turn.

Each chunk is given to the same extraction as a chat turn (the LLM when one is configured, the
offline engine otherwise) as the words of the document; its episodic items become case notes of
the document's matter with the document's provenance — ``source_type=document``,
``source_id=document:<id>:p<page>:<start>-<end>``, the citation as speaker — and go through the
same routing as chat notes (ADD / UPDATE of the same slot with history kept / IGNORE, links to
the notes the chat made about the same facts). Persona items are not taken from documents. A
document without an uploader (``import_documents`` without ``--user``) is searchable but makes
no notes: routing compares with the notes its owner may see.
"""
from __future__ import annotations

import logging
import re

from django.db import transaction

from infra.embeddings import get_embedder
from legaltext.documents import SIGNATURE_LINE_RE, is_contract, mended, only_agrees
from memory.models import Category, MemoryScope, SourceType
from documents.models import Document, DocumentChunk
from memory.services.notes import NoteDraft, NoteValidationError
from remember.documents.articles import whole_articles
from documents.chunking import is_heading, opens_an_article
from remember.drafts import ItemError, category_slug, is_persona_item
from remember.extract import extract_turn
from remember.routing import route_and_write

#: Chunks of one document read for notes (the longest documents are bundles: their first chunks
#: hold the parties, the subject and the key terms; every chunk is searchable regardless).
DOCUMENT_NOTE_CHUNKS = 60

logger = logging.getLogger("legalmem.pipeline")
ACTOR = "system:documents"


def provenance_id(chunk: DocumentChunk) -> str:
    return f"document:{chunk.document_id}:p{chunk.page.number}:{chunk.start}-{chunk.end}"


def remember_document(document: Document) -> int:
    """Extract and route the notes of the document's chunks; returns how many items were routed."""
    if document.uploaded_by_id is None:  # routing reads the notes their owner may see: no owner, no notes
        logger.info("document %s has no uploader: no notes made from it", document.pk)
        return 0
    routed = 0
    chunks = DocumentChunk.objects.filter(document=document).select_related("page", "document").order_by("ordinal")
    first_page = document.pages.order_by("number").values_list("text", flat=True).first() or ""
    contract = is_contract(document.title, first_page)
    chunks = list(chunks[:DOCUMENT_NOTE_CHUNKS + 1])
    for chunk, following in zip(chunks[:DOCUMENT_NOTE_CHUNKS], [*chunks[1:], None]):
        text = mended(_with_heading(chunk, following))
        outcome = extract_turn(text, "",
                               user_name=document.citation(chunk.page.number),
                               # a contract's "上月" is each pay period's, not the upload's
                               said_on=None if contract else document.uploaded_at.date())
        citation = document.citation(chunk.page.number)
        items = [item for item in outcome.items if not is_persona_item(item) and not _restates_heading(item, chunk, citation)
                 and not (contract and only_agrees(item.content.removeprefix(f"{citation}说：")))]
        if contract:
            items = whole_articles(items, text)
        if not items:
            continue
        drafts = []
        for item in items:
            try:
                drafts.append(_draft(item, document, chunk, contract=contract))
            except ItemError as error:
                logger.warning("document %s chunk %s: an item refused: %s", document.pk, chunk.pk, error)
        if not drafts:
            continue
        vectors = get_embedder().embed_passages([draft.content for draft in drafts])
        for index, (draft, vector) in enumerate(zip(drafts, vectors)):
            try:
                with transaction.atomic():
                    route_and_write(draft, vector, actor=ACTOR, source_key=f"document-chunk:{chunk.pk}",
                                    item_index=index)
                routed += 1
            except (NoteValidationError, ItemError) as error:
                logger.warning("document %s chunk %s item %d refused: %s", document.pk, chunk.pk, index, error)
    return routed


def _with_heading(chunk: DocumentChunk, following: DocumentChunk | None = None) -> str:
    """The chunk's text under its heading — once, and only above the heading's own text: a chunk
    that opens with its heading line ("第七条 …，" read as a heading) is not given it twice, and
    an article's first line carried to the next page ("第八条 房屋的自然损耗及正常使用产生的墙面污渍，")
    is not put above a page that opens with another article (第九条): there it would be noted
    alone, cut from its tail "不属于乙方应当赔偿的损失范围", which inverts it. Above the page that
    holds its tail ("…十日内" / "无息退还全部押金。") it makes the article whole. Nor above the
    signatures: "协商不成的，任何一方均可向房屋所在地" + "甲方（签字）：周海峰" read as one term."""
    heading = chunk.heading.strip()
    text = _without_the_article_overleaf(chunk, following)
    if not text:
        return ""  # the chunk is the article read whole overleaf
    first_line = text.split("\n", 1)[0]
    if not heading or text.startswith(heading) or is_heading(first_line) or opens_an_article(first_line) \
            or SIGNATURE_LINE_RE.match(first_line):
        return text
    return f"{heading}\n{text}"


def _without_the_article_overleaf(chunk: DocumentChunk, following: DocumentChunk | None) -> str:
    """The chunk's text without the article it ends inside of when the next page's chunk is
    headed by that article (``chunking.unfinished_article``): read whole there, not cut here."""
    text = chunk.text.strip()
    if following is None or following.page_id == chunk.page_id or not following.heading.strip():
        return text
    carried = following.heading.strip()
    if text.endswith(carried):
        return text[: -len(carried)].rstrip()
    return text




def _restates_heading(item, chunk: DocumentChunk, citation: str) -> bool:
    """The offline engine reads a lone heading line ("房屋租赁合同") as a statement: not a fact."""
    said = item.content.removeprefix(f"{citation}说：").strip("。. ")
    return said in {chunk.heading.strip(), chunk.document.title.strip()}


def document_wording(content: str, chunk_text: str) -> str:
    """The engine writes chat statements in the third person ("用户…"); a document's sentence is
    the document's, not the user's: a leading "用户" (or the "当事人" the subject rules write for
    it, ``remember.extraction.subjects``) the document does not say is dropped."""
    for speaker in ("用户", "当事人"):
        if content.startswith(speaker) and speaker not in chunk_text:
            return content.removeprefix(speaker).lstrip("：:，, ")
    return content


#: "第八条 …": a sentence opening with an article of the document.
_ARTICLE_OPENING_RE = re.compile(r"^(第[一二三四五六七八九十百千零〇\d]+条)\s*[：:]?\s*")
#: The tag of a contract's terms (their category is 事实: what the parties agreed, not law).
CONTRACT_TERM_TAG = "合同条款"


def contract_term(content: str, title: str) -> str:
    """A contract's sentence as its term: "第八条 房屋的…" is "《房屋租赁合同》第八条：房屋的…"."""
    return _ARTICLE_OPENING_RE.sub(lambda m: f"《{title}》{m.group(1)}：", content, count=1)


def _draft(item, document: Document, chunk: DocumentChunk, *, contract: bool) -> NoteDraft:
    """The note of one item of a chunk. A contract's items are its terms: never 法条 (a contract
    citing the 民法典 is not the law), each named by the contract and its article."""
    citation = document.citation(chunk.page.number)
    content = document_wording(item.content, chunk.text)
    category, tags = category_slug(item), list(item.tags)
    if contract:
        content = contract_term(content, document.title)
        if category in (Category.LAW, Category.ACTION):  # what the parties agreed, not law nor advice
            category, tags = Category.FACT.value, [t for t in tags if t not in ("law", "法条")]
        tags.append(CONTRACT_TERM_TAG)
    return NoteDraft(
        firm=document.firm,
        content=content,
        memory_scope=MemoryScope.CASE,  # a matter's document: behind its wall, whatever the extractor says
        category=category,
        source_type=SourceType.DOCUMENT,
        memory_type=item.memory_type,
        keywords=list(item.keywords),
        tags=[*tags, f"document:{document.title}"[:100]],
        context=citation,
        importance=item.importance,
        confidence=item.confidence,
        matter=document.matter,
        owner=document.uploaded_by,
        source_id=provenance_id(chunk),
        speaker=citation[:200],
        said_at=document.uploaded_at,
        said=chunk.text,
    )
