"""The documents' models moved from ``memory`` to the ``documents`` app (issue 53) with their rows:
a populated database migrates back (the tables and content types return to ``memory``) and
forward again, and after both ways every document, page and chunk is there and readable — by
alice, who is assigned to the matter, and by nobody else."""
from __future__ import annotations

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from documents.models import Document, DocumentChunk, DocumentPage
from documents.search import search_documents
from tests.documents.conftest import add_document
from tests.documents.files import chinese_text_pdf

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE_THE_MOVE = [("documents", None), ("memory", "0031_audit_conversation_exported")]
LEASE = ["房屋租赁合同", "第一条 月租金为8000元，押金为16000元。", "第二条 租赁期限自2026年3月1日起一年。"]


def _migrate(targets: list[tuple[str, str | None]]) -> MigrationExecutor:
    executor = MigrationExecutor(connection)
    executor.migrate(targets)
    return executor


def _leaves() -> list[tuple[str, str]]:
    return MigrationExecutor(connection).loader.graph.leaf_nodes()


def _tables() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.table_names(cursor))


def _counts(app: str) -> tuple[int, ...]:
    with connection.cursor() as cursor:
        counts = []
        for table in ("document", "documentpage", "documentchunk"):
            cursor.execute(f"SELECT count(*) FROM {app}_{table}")
            counts.append(cursor.fetchone()[0])
        return tuple(counts)


def test_a_populated_database_migrates_back_and_forward_keeping_every_row(world):
    document = add_document(world.matter_deposit, "lease.pdf", chinese_text_pdf([LEASE]), actor=world.alice)
    ContentType.objects.get_for_model(Document)  # as admin and permissions create them
    before = (Document.objects.count(), DocumentPage.objects.count(), DocumentChunk.objects.count())
    assert before[0] == 1 and before[2] > 0
    chunk_text = DocumentChunk.objects.filter(document=document).values_list("text", flat=True).first()

    try:
        executor = _migrate(BEFORE_THE_MOVE)
        assert {"memory_document", "memory_documentpage", "memory_documentchunk"} <= _tables()
        assert not {"documents_document", "documents_documentchunk"} & _tables()
        assert _counts("memory") == before
        old_state = executor.loader.project_state(BEFORE_THE_MOVE[1:]).apps
        assert old_state.get_model("memory", "Document").objects.get().title == document.title
        assert old_state.get_model("memory", "DocumentChunk").objects.filter(text=chunk_text).exists()
        assert ContentType.objects.filter(app_label="memory", model="document").exists()
        assert not ContentType.objects.filter(app_label="documents", model="document").exists()
    finally:
        _migrate(_leaves())
    ContentType.objects.clear_cache()

    assert _counts("documents") == before
    assert not {"memory_document", "memory_documentpage", "memory_documentchunk"} & _tables()
    assert ContentType.objects.get_for_model(Document).app_label == "documents"
    assert not ContentType.objects.filter(app_label="memory", model__startswith="document").exists()
    assert Document.objects.visible_to(world.alice).get().title == document.title
    assert not Document.objects.visible_to(world.bob).exists()
    assert not Document.objects.visible_to(world.charlie).exists()
    [hit] = search_documents(world.alice, "月租金", matter_id=world.matter_deposit.pk, limit=1)
    assert hit.document_id == document.pk
    assert search_documents(world.bob, "月租金") == [] and search_documents(world.charlie, "月租金") == []
    # The id sequences moved with their tables: the next document numbers on.
    assert add_document(world.matter_deposit, "second.pdf", chinese_text_pdf([LEASE]), actor=world.alice).pk > document.pk
