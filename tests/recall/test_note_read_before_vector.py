"""The note read in two steps (recall/candidate_sql.py): what needs no query vector (the
case-exactness EXPLAIN, the keyword read) runs while the query encodes, then one statement with
the nearest-neighbour reads and the keyword candidates' distances. The keyword candidates must be
those of the ORM under ``visible_to(user)`` — alice, bob (walled off from matter_deposit), charlie
(another firm: nothing of firm A) — with the ORM's cosine distances."""
from __future__ import annotations

import pytest
from django.db import connection
from pgvector.django import CosineDistance

from infra.embeddings import get_embedder
from memory.models import Note
from memory.models.conversations import SEARCH_CONFIG
from recall.candidate_sql import _tsquery_text, prepare_candidates, read_candidates, read_prepared_notes
from recall.hnsw import _fetch_with_local_hnsw
from recall.keywords import query_tokens
from recall.layer_rules import layer_filter
from recall.plan import make_plan
from recall.reach import reach_of
from tests.recall.searchers import searcher_and_matter

pytestmark = pytest.mark.django_db

QUESTIONS = ["电脑花屏", "检测报告", "押金 交接照片", "Beta 客户的检测报告", "偏好"]


def _orm_keyword(user, plan, reach, tokens) -> dict:
    """The ORM reference: the visible, active notes of the planned layers holding every query
    word, with their cosine distance to the query (None without an embedding)."""
    return {
        note.pk: note
        for note in Note.objects.visible_to(user).active()
        .filter(layer_filter(plan, reach))
        .extra(
            where=[f"to_tsvector('{SEARCH_CONFIG}'::regconfig, COALESCE(search_text, '')) "
                   f"@@ to_tsquery('{SEARCH_CONFIG}'::regconfig, %s)"],
            params=[_tsquery_text(tokens, "&")],
        )
    }


@pytest.mark.parametrize("who", ["alice", "bob", "charlie"])
@pytest.mark.parametrize("matter", [None, "matter_laptop"])
def test_keyword_read_before_the_vector_gives_the_orm_candidates(world, memory, who, matter):
    user, matter_id = searcher_and_matter(world, who, matter)
    visible = set(Note.objects.visible_to(user).values_list("pk", flat=True))
    found_any = False
    for question in QUESTIONS:
        tokens = query_tokens(question)
        plan = make_plan(question, matter_id=matter_id)
        reach = reach_of(user)
        prepared = prepare_candidates(user, plan, reach, tokens, per_layer=20)
        vector = get_embedder().embed_query(question)
        by_layer, keyword = read_prepared_notes(prepared, vector)
        reference = _orm_keyword(user, plan, reach, tokens)
        assert {c.note.pk for c in keyword} == set(reference), (who, question)
        assert {c.note.pk for c in keyword} <= visible
        ranks = [c.keyword_rank for c in keyword]
        assert ranks == sorted(ranks, reverse=True)
        for c in keyword:
            expected = reference[c.note.pk]
            assert c.via_keyword
            assert not c.via_vector
            if expected.embedding is None:
                assert c.distance is None
            else:
                orm = Note.objects.filter(pk=c.note.pk).annotate(
                    d=CosineDistance("embedding", vector)).values_list("d", flat=True).get()
                assert c.distance == pytest.approx(orm, abs=1e-6)
        # The same answer as the read in one call (what vector_candidates_by_layer and the bench use).
        again, again_keyword = read_candidates(user, plan, reach, vector, tokens, per_layer=20)
        assert {layer: [c.note.pk for c in found] for layer, found in again.items()} == {
            layer: [c.note.pk for c in found] for layer, found in by_layer.items()}
        assert [(c.note.pk, c.distance, c.keyword_rank) for c in again_keyword] == [
            (c.note.pk, c.distance, c.keyword_rank) for c in keyword]
        found_any |= bool(keyword)
    if who != "charlie":
        assert found_any, "the questions must exercise the keyword read"


def test_the_reads_before_the_vector_send_no_vector(world, memory):
    """``prepare_candidates`` runs while the query encodes: it sends no vector statement."""
    statements = []

    def grab(execute, sql, params, many, context):
        statements.append(sql)
        return execute(sql, params, many, context)

    plan = make_plan("电脑花屏", matter_id=None)
    reach = reach_of(world.alice)
    with connection.execute_wrapper(grab):
        prepared = prepare_candidates(world.alice, plan, reach, query_tokens("电脑花屏"), per_layer=20)
    assert statements
    assert not any("query_vector" in sql or "<=>" in sql for sql in statements)
    assert prepared.keyword_rows


def test_a_keyword_candidate_no_longer_visible_at_the_vector_statement_is_dropped(world, memory):
    """Between the two steps a note may be forgotten: the vector statement reads its distance
    under the visibility rule again, so it is not returned."""
    plan = make_plan("电脑花屏", matter_id=world.matter_laptop.pk)
    reach = reach_of(world.alice)
    prepared = prepare_candidates(world.alice, plan, reach, query_tokens("电脑花屏"), per_layer=20)
    gone = prepared.keyword_rows[0][0]
    Note.objects.filter(pk=gone).update(status=Note.Status.FORGOTTEN)
    _by_layer, keyword = read_prepared_notes(prepared, get_embedder().embed_query("电脑花屏"))
    assert gone not in {c.note.pk for c in keyword}
    assert len(keyword) == len(prepared.keyword_rows) - 1


def test_anonymous_and_firmless_users_read_nothing_without_a_query(world, memory, django_user_model):
    from django.contrib.auth.models import AnonymousUser

    plan = make_plan("电脑花屏", matter_id=None)
    nobody = django_user_model.objects.create(username="nobody")
    for user in (AnonymousUser(), nobody):
        reach = reach_of(user)
        statements = []
        with connection.execute_wrapper(lambda execute, sql, *rest: statements.append(sql) or execute(sql, *rest)):
            prepared = prepare_candidates(user, plan, reach, ["电脑"], per_layer=20)
            by_layer, keyword = read_prepared_notes(prepared, get_embedder().embed_query("电脑花屏"))
        assert statements == []
        assert keyword == []
        assert all(found == [] for found in by_layer.values())


@pytest.mark.django_db(transaction=True)
def test_the_hnsw_settings_hold_for_the_read_only_in_one_round_trip(world, memory):
    """``_fetch_with_local_hnsw`` sends the settings and the read as one query string: they hold
    for the read (one implicit transaction) and are gone after it, outside a transaction."""
    def setting() -> str:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('hnsw.ef_search')")
            return cursor.fetchone()[0]

    before = setting()
    rows = _fetch_with_local_hnsw(
        "SELECT current_setting('hnsw.ef_search'), current_setting('hnsw.iterative_scan'), %s", [7], 77, 1000)
    assert rows == [("77", "relaxed_order", 7)]
    assert setting() == before != "77"
    executed = []
    plan = make_plan("电脑花屏", matter_id=None)
    reach = reach_of(world.alice)
    prepared = prepare_candidates(world.alice, plan, reach, query_tokens("电脑花屏"), per_layer=20)
    with connection.execute_wrapper(lambda execute, sql, *rest: executed.append(sql) or execute(sql, *rest)):
        by_layer, _keyword = read_prepared_notes(prepared, get_embedder().embed_query("电脑花屏"))
    assert len(executed) == 1, "after the vector: one round trip"
    assert any(by_layer.values())
