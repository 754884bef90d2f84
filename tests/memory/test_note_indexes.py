"""The indexes of ``memory_note`` do not grow with the number of firms: every statement on the
table opens and plans all of them, so one index per firm made every read and write slower with
each firm (migration 0028, docs/performance.md "Why the firm-wide layers share one index")."""
from __future__ import annotations

import pytest
from django.db import connection

from memory.services.tenancy import create_firm
from tests.factories import FirmFactory, UserFactory

pytestmark = pytest.mark.django_db


def _note_indexes() -> dict[str, str]:
    """name → definition of every index on ``memory_note``."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes "
                       "WHERE tablename = 'memory_note' AND schemaname = current_schema()")
        return dict(cursor.fetchall())


def test_new_firms_add_no_index_to_the_note_table():
    before = _note_indexes()
    FirmFactory.create_batch(3)
    create_firm(name="Ida & Partners", slug="ida-partners", actor=UserFactory(username="ida"))
    assert _note_indexes() == before


def test_the_firm_wide_layers_share_one_partial_hnsw_index():
    definition = _note_indexes()["note_embedding_firmwide_hnsw"]
    assert "USING hnsw (embedding vector_cosine_ops)" in definition
    assert "m='16'" in definition and "ef_construction='64'" in definition
    for scope in ("cross_case", "general_law", "global"):
        assert scope in definition
    assert "'case'" not in definition and "user_profile" not in definition
    assert "status)::text = 'active'" in definition
    assert "firm_id" not in definition
    assert not [name for name in _note_indexes() if name.startswith("note_firmwide_hnsw_f")]


def test_no_trigger_or_function_of_the_per_firm_indexes_is_left():
    with connection.cursor() as cursor:
        cursor.execute("SELECT tgname FROM pg_trigger WHERE tgrelid = 'memory_firm'::regclass AND NOT tgisinternal")
        assert not [name for (name,) in cursor.fetchall() if name.startswith("firm_note_index")]
        cursor.execute("SELECT proname FROM pg_proc WHERE proname LIKE 'legalmem_%%firm_note_index%%'")
        assert cursor.fetchall() == []
