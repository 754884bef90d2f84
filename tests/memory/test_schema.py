"""The memory schema in real PostgreSQL: pgvector column, HNSW index actually used, append-only audit."""
from __future__ import annotations

import numpy as np
from pgvector.django import CosineDistance
import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError

from infra.embeddings import get_embedder
from memory.embedding_checks import note_column_dimensions
from memory.models import AuditLog, Note

pytestmark = pytest.mark.django_db


def test_vector_extension_is_installed_at_pgvector_0_8_or_newer():
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        (version,) = cursor.fetchone()
    assert tuple(int(p) for p in version.split(".")[:2]) >= (0, 8)


def test_embedding_column_is_a_vector_as_wide_as_the_embedder():
    assert note_column_dimensions() == get_embedder().dimensions == 384


def test_hnsw_cosine_index_exists_on_the_embedding():
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'note_embedding_hnsw'")
        (definition,) = cursor.fetchone()
    assert "USING hnsw" in definition
    assert "vector_cosine_ops" in definition
    assert "m='16'" in definition
    assert "ef_construction='64'" in definition


def test_order_by_cosine_distance_with_limit_uses_the_hnsw_index(world):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 384)).astype(np.float32)
    Note.objects.bulk_create(
        Note(
            firm=world.firm_a,
            content=f"synthetic note {i}",
            memory_scope="global",
            category="fact",
            source_type="manual",
            content_hash=f"{i:064d}",
            embedding=vectors[i] / np.linalg.norm(vectors[i]),
        )
        for i in range(300)
    )
    query = Note.objects.order_by(CosineDistance("embedding", vectors[0]))[:10]
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_note")
        # A 300-row table could be scanned sequentially; the planner must still be able to pick HNSW.
        cursor.execute("SET LOCAL enable_seqscan = off")
        sql, params = query.query.sql_with_params()
        cursor.execute(f"EXPLAIN {sql}", params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        assert "Index Scan using note_embedding_hnsw" in plan, plan
        nearest = list(query)
    assert nearest[0].content == "synthetic note 0"


def test_audit_log_refuses_update_and_delete_even_in_raw_sql(world):
    world.note("用户已保存电子发票和付款截图。", matter=world.matter_laptop, category="evidence")
    entry = AuditLog.objects.latest("id")
    for statement in (
        "UPDATE memory_auditlog SET actor_label = 'mallory' WHERE id = %s",
        "DELETE FROM memory_auditlog WHERE id = %s",
    ):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(statement, [entry.pk])
    assert AuditLog.objects.get(pk=entry.pk).actor_label == "system:test"


def test_audit_log_model_refuses_save_and_delete_of_existing_entries(world):
    world.note("商家以人为损坏为由拒绝退换。", matter=world.matter_laptop)
    entry = AuditLog.objects.latest("id")
    entry.actor_label = "mallory"
    with pytest.raises(PermissionError):
        entry.save()
    with pytest.raises(PermissionError):
        entry.delete()


def test_importance_and_confidence_are_bounded_by_the_database(world):
    note = world.note("押金为3000元。", matter=world.matter_deposit)
    with pytest.raises(DatabaseError), transaction.atomic():
        Note.objects.filter(pk=note.pk).update(confidence=1.5)
