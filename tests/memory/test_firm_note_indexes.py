"""Each firm's own HNSW index over its firm-wide notes, kept by triggers on the firm table
(migration 0027): built with the firm (after the commit when its transaction had written notes),
gone with it, and on the shadow column during a re-embedding run. The reads that walk them: tests/recall/test_firm_walks.py."""
from __future__ import annotations

import pytest
from django.db import IntegrityError, connection, transaction

from memory.models import Firm, Note
from memory.models.notes import FIRM_NOTE_INDEX_PREFIX
from memory.services.tenancy import build_missing_firm_note_indexes, create_firm
from tests.factories import FirmFactory

pytestmark = pytest.mark.django_db


def _firm_indexes() -> dict[str, str]:
    """name → definition of every per-firm index on ``memory_note``."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memory_note' AND indexname LIKE %s",
            [FIRM_NOTE_INDEX_PREFIX + "%"],
        )
        return dict(cursor.fetchall())


def test_a_new_firm_gets_an_hnsw_index_over_its_own_firm_wide_notes():
    firm = FirmFactory()
    definition = _firm_indexes()[f"{FIRM_NOTE_INDEX_PREFIX}{firm.pk}"]
    assert "USING hnsw (embedding vector_cosine_ops)" in definition
    assert "m='16'" in definition and "ef_construction='64'" in definition
    assert f"(firm_id = {firm.pk})" in definition
    for scope in ("cross_case", "general_law", "global"):
        assert scope in definition
    assert "'case'" not in definition and "user_profile" not in definition
    assert "status)::text = 'active'" in definition


def test_every_firm_has_its_own_and_none_outlives_its_firm(world):
    names = set(_firm_indexes())
    assert {f"{FIRM_NOTE_INDEX_PREFIX}{world.firm_a.pk}", f"{FIRM_NOTE_INDEX_PREFIX}{world.firm_b.pk}"} <= names
    gone = FirmFactory()
    kept_name = f"{FIRM_NOTE_INDEX_PREFIX}{world.firm_a.pk}"
    Firm.objects.filter(pk=gone.pk).delete()
    names = set(_firm_indexes())
    assert f"{FIRM_NOTE_INDEX_PREFIX}{gone.pk}" not in names
    assert kept_name in names  # another firm's is untouched (f1 must not take f12 with it)


def test_a_firm_that_is_rolled_back_leaves_no_index():
    before = set(_firm_indexes())
    with pytest.raises(IntegrityError), transaction.atomic():
        FirmFactory(slug="twice")
        FirmFactory(slug="twice")  # the slug is unique: the whole block rolls back
    assert set(_firm_indexes()) == before


@pytest.mark.django_db(transaction=True)
def test_truncating_the_firms_drops_every_firm_index(world):
    """What ``flush`` (a transactional test's teardown) does to the firm table."""
    assert _firm_indexes()
    with connection.cursor() as cursor:
        cursor.execute("TRUNCATE memory_firm CASCADE")
    assert _firm_indexes() == {}


def test_during_a_reembedding_run_a_new_firm_is_indexed_on_the_shadow_column_too():
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE memory_note ADD COLUMN embedding_next vector(512)")
    firm = FirmFactory()
    indexes = _firm_indexes()
    assert "(embedding vector_cosine_ops)" in indexes[f"{FIRM_NOTE_INDEX_PREFIX}{firm.pk}"]
    shadow = indexes[f"{FIRM_NOTE_INDEX_PREFIX}{firm.pk}_next"]
    assert "(embedding_next vector_cosine_ops)" in shadow and f"(firm_id = {firm.pk})" in shadow
    Firm.objects.filter(pk=firm.pk).delete()
    assert not {name for name in _firm_indexes() if name.startswith(f"{FIRM_NOTE_INDEX_PREFIX}{firm.pk}")}


def _a_note_in(firm) -> Note:
    return Note.objects.create(firm=firm, content="先写的笔记", memory_scope="global", category="fact",
                               source_type="manual", content_hash="f" * 64)


@pytest.mark.django_db(transaction=True)
def test_a_firm_inserted_after_notes_in_one_transaction_is_kept_and_indexed_after_the_commit(world):
    """The notes' deferred checks are pending, so PostgreSQL refuses an index on memory_note:
    the transaction must still commit whole, and the index comes after it."""
    with transaction.atomic():
        note = _a_note_in(world.firm_a)
        late = FirmFactory(slug="late")  # no index possible inside this transaction
    assert Note.objects.filter(pk=note.pk).exists() and Firm.objects.filter(pk=late.pk).exists()
    assert f"{FIRM_NOTE_INDEX_PREFIX}{late.pk}" not in _firm_indexes()
    assert build_missing_firm_note_indexes() == [late.pk]
    assert f"{FIRM_NOTE_INDEX_PREFIX}{late.pk}" in _firm_indexes()
    assert build_missing_firm_note_indexes() == []


@pytest.mark.django_db(transaction=True)
def test_create_firm_after_notes_builds_the_index_once_committed(world):
    with transaction.atomic():
        _a_note_in(world.firm_a)
        firm = create_firm(name="Gamma 律所", slug="gamma", actor=world.alice)
    assert f"{FIRM_NOTE_INDEX_PREFIX}{firm.pk}" in _firm_indexes()
