"""The one-statement candidate read (raw SQL on the hot path): it must return exactly what the
ORM reads return under ``visible_to(user)`` — never a note of another firm, behind the ethical
wall, or someone else's profile — and take part in every layered search."""
from __future__ import annotations

import numpy as np
import pytest
from django.db import connection, transaction
from pgvector.django import CosineDistance

from infra.embeddings import get_embedder
from memory.models import MemoryScope, Note
from recall import candidate_sql
from recall import search_memory
from recall.keywords import query_tokens
from recall.layer_rules import layer_filter
from recall.plan import make_plan
from recall.reach import reach_of
from tests.recall.searchers import note_statement_of, searcher_and_matter

pytestmark = pytest.mark.django_db

QUESTIONS = ["电脑花屏检测报告", "押金 交接照片", "并购估值", "我的偏好是什么", "Beta 客户的检测报告", "退货"]


def _orm_vector(user, plan, reach, vector, per_layer):
    """The ORM reference: per layer, the exact nearest visible notes (no raw SQL). Index scans
    are off for it: the planner may otherwise walk the HNSW index, whose filtered walk returns
    fewer rows (depending on the statistics earlier tests left) — an approximate reference."""
    found = {}
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        for layer in plan.layers:
            rows = (
                Note.objects.visible_to(user).active().with_embedding()
                .filter(layer_filter(plan, reach, [layer]))
                .order_by(CosineDistance("embedding", vector))[:per_layer]
            )
            found[layer] = [note.pk for note in rows]
    return found


@pytest.mark.parametrize("who", ["alice", "bob", "charlie"])
@pytest.mark.parametrize("matter", [None, "matter_laptop"])
def test_fast_read_matches_the_orm_and_stays_visible(world, memory, who, matter):
    user, matter_id = searcher_and_matter(world, who, matter)
    visible = set(Note.objects.visible_to(user).values_list("pk", flat=True))
    for question in QUESTIONS:
        vector = get_embedder().embed_query(question)
        plan = make_plan(question, matter_id=matter_id)
        reach = reach_of(user)
        fast = candidate_sql.read_candidates(user, plan, reach, vector, query_tokens(question), per_layer=20)
        assert fast is not None, "the layered search must use the one-statement read"
        by_layer, keyword = fast
        got = {c.note.pk for found in by_layer.values() for c in found} | {c.note.pk for c in keyword}
        assert got <= visible, "a candidate outside visible_to(user)"
        # Tiny layers are read exactly: the same notes as the ORM's exact per-layer read.
        reference = _orm_vector(user, plan, reach, vector, per_layer=50)
        for layer, found in by_layer.items():
            assert [c.note.pk for c in found] == reference[layer][: len(found)]
            assert len(found) == min(len(reference[layer]), candidate_sql.LATER_LAYER_LIMIT if layer != plan.layers[0] else 20)
        for c in keyword:
            assert c.via_keyword
            assert c.keyword_rank is not None


def test_layered_search_never_returns_an_invisible_note(world, memory):
    for user in (world.alice, world.bob, world.charlie):
        visible = set(Note.objects.visible_to(user).values_list("pk", flat=True))
        for question in QUESTIONS:
            result = search_memory(user, question, k=20)
            assert {hit.note.pk for hit in result.hits} <= visible
            assert result.timings["keyword"] == 0.0  # the keyword read went with the vector statement


def _synthetic_notes(world, count: int = 200) -> None:
    """Enough rows (case notes on both of alice's matters and bob's walled-off one, firm-wide
    notes) for the planner to consider every index; vectors are random unit vectors."""
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(count, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    matters = [world.matter_laptop, world.matter_deposit, world.matter_secret]
    scopes = [MemoryScope.CASE, MemoryScope.CASE, MemoryScope.GENERAL_LAW, MemoryScope.CROSS_CASE]
    Note.objects.bulk_create(
        Note(
            firm=world.firm_a, content=f"合成笔记 {i}", memory_scope=scopes[i % 4], category="fact",
            source_type="manual", content_hash=f"{i:064d}", embedding=vectors[i],
            matter=matters[i % 3] if scopes[i % 4] == MemoryScope.CASE else None,
        )
        for i in range(count)
    )


@pytest.mark.django_db(transaction=True)
def test_the_search_statement_can_use_the_partial_and_covering_indexes(world, settings):
    """The literal conditions of the statement must imply the indexes' predicates, or PostgreSQL
    silently walks the full HNSW index / reads the heap. Committed rows and VACUUM ANALYZE (what
    autovacuum keeps on a live table: statistics and the visibility map index-only scans need),
    then EXPLAIN with the scans a small table would prefer switched off. (``enable_indexscan``
    stays on: switching it off also disables index-only scans.) The exact layers compared in
    PostgreSQL, as inside a transaction or with ``SEARCH_EXACT_VECTORS_MB=0``
    (tests/recall/test_exact_vectors.py covers the kept vectors)."""
    settings.SEARCH_EXACT_VECTORS_MB = 0
    _synthetic_notes(world)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memory_note")
    vector = get_embedder().embed_query("电脑花屏")
    plan = make_plan("电脑花屏的证据", matter_id=None)
    assert MemoryScope.CASE in plan.layers
    assert MemoryScope.GENERAL_LAW in plan.layers
    reach = reach_of(world.alice)
    sql, params = note_statement_of(world.alice, plan, reach, vector)

    def explain(*switched_off: str, only_indexes: tuple[str, ...] = ()) -> str:
        """EXPLAIN with scans switched off; with ``only_indexes``, the table's other btree
        indexes are dropped for the EXPLAIN (rolled back): which one the planner prefers among
        several that work depends on statistics and on the visibility map, which a VACUUM cannot
        always set while another connection holds an old snapshot — what matters is that the
        statement's literals let it use the one named."""
        with transaction.atomic(), connection.cursor() as cursor:
            for setting in ("enable_seqscan", "enable_bitmapscan", *switched_off):
                cursor.execute(f"SET LOCAL {setting} = off")
            if only_indexes:
                cursor.execute(
                    "SELECT indexname FROM pg_indexes WHERE tablename = 'memory_note' "
                    "AND indexdef NOT LIKE '%%USING hnsw%%' AND indexname <> ALL(%s) "
                    "AND indexname NOT IN (SELECT conname FROM pg_constraint)",
                    [list(only_indexes)],
                )
                for (name,) in cursor.fetchall():
                    cursor.execute(f'DROP INDEX "{name}"')
            cursor.execute(f"EXPLAIN {sql}", params)
            plan_text = "\n".join(row[0] for row in cursor.fetchall())
            transaction.set_rollback(True)
            return plan_text

    # Without an explicit sort, the firm-wide nearest-neighbour read must walk an HNSW index:
    # the partial one (smaller, so cheaper) when its predicate is implied.
    explained = explain("enable_sort")
    assert "Index Scan using note_embedding_firmwide_hnsw" in explained, explained
    # The case read compares every row of the user's matters: from the covering index alone.
    explained = explain(only_indexes=("note_case_vectors",))
    assert "Index Only Scan using note_case_vectors" in explained, explained
    # So does the user-profile read, over the user's own profile notes.
    assert MemoryScope.USER_PROFILE in plan.layers
    explained = explain(only_indexes=("note_case_vectors", "note_profile_vectors"))
    assert "Index Only Scan using note_profile_vectors" in explained, explained


def test_case_layer_over_all_matters_is_exact_and_walled(world, memory):
    """No current matter: the case layer is read exactly (the small-set path) and gives the ORM's
    exact neighbours; bob never gets the matter he is walled off from, charlie nothing of firm A."""
    _synthetic_notes(world)
    vector = get_embedder().embed_query("电脑花屏 押金")
    plan = make_plan("电脑花屏 押金", matter_id=None)
    for user in (world.alice, world.bob, world.charlie):
        reach = reach_of(user)
        assert candidate_sql._case_read_is_exact(plan, reach, plan.layers) == bool(reach.matter_ids)
        by_layer, _keyword = candidate_sql.read_candidates(user, plan, reach, vector, [], per_layer=20)
        reference = _orm_vector(user, plan, reach, vector, per_layer=20)
        got = [c.note.pk for c in by_layer[MemoryScope.CASE]]
        assert got == reference[MemoryScope.CASE][: len(got)]
        visible_matters = set(reach.matter_ids)
        assert {c.note.matter_id for c in by_layer[MemoryScope.CASE]} <= visible_matters | {None}
    assert world.matter_deposit.pk not in reach_of(world.bob).matter_ids


def test_case_layer_over_many_matters_falls_back_to_the_hnsw_walk(world, memory, settings):
    """Above EXACT_CASE_MAX_ROWS the filtered HNSW walk reads the case layer; still only what the
    user may see."""
    _synthetic_notes(world)
    settings.EXACT_CASE_MAX_ROWS = 0
    vector = get_embedder().embed_query("电脑花屏")
    plan = make_plan("电脑花屏", matter_id=None)
    for user in (world.alice, world.bob, world.charlie):
        reach = reach_of(user)
        assert not candidate_sql._case_read_is_exact(plan, reach, plan.layers)
        sql, _params = note_statement_of(user, plan, reach, vector)
        assert sql.count("+ 0") == 1  # the user-profile read only: the case layer walks
        by_layer, _keyword = candidate_sql.read_candidates(user, plan, reach, vector, [], per_layer=20)
        visible = set(Note.objects.visible_to(user).values_list("pk", flat=True))
        found = {c.note.pk for c in by_layer[MemoryScope.CASE]}
        assert found <= visible
        assert bool(found) == bool(reach.matter_ids)
