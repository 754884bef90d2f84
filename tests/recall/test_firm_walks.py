"""The firm-wide layers are walked in the one partial HNSW index all firms share
(``note_embedding_firmwide_hnsw``): a user of two firms gets the nearest notes of both; a member
of one firm, and charlie the outsider to firm A, only their own firm's."""
from __future__ import annotations

import numpy as np
import pytest
from django.db import connection, transaction
from pgvector.django import CosineDistance

from memory.models import MemoryScope, Note, Role
from memory.models.notes import FIRM_WIDE_SCOPES
from recall.candidate_sql import read_candidates
from recall.layer_rules import layer_filter
from recall.plan import make_plan
from recall.reach import reach_of
from tests.factories import MembershipFactory, UserFactory
from tests.recall.searchers import note_statement_of

pytestmark = pytest.mark.django_db(transaction=True)

QUESTION = "竞业限制补偿金的计算"


def _firm_wide_notes(world, per_firm: int = 120) -> np.ndarray:
    """Firm-wide notes in both firms (random unit vectors), committed and analysed; returns the
    vector the test asks with."""
    rng = np.random.default_rng(11)
    vectors = rng.normal(size=(2 * per_firm + 1, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    Note.objects.bulk_create(
        Note(
            firm=firm, content=f"{firm.slug} 通用笔记 {i}", memory_scope=FIRM_WIDE_SCOPES[i % 3], category="fact",
            source_type="manual", content_hash=f"{firm.pk}{i:060d}", embedding=vectors[offset + i],
        )
        for offset, firm in ((0, world.firm_a), (per_firm, world.firm_b))
        for i in range(per_firm)
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE memory_note")
    return vectors[-1]


def _explain(sql: str, params: list) -> str:
    with transaction.atomic(), connection.cursor() as cursor:
        for setting in ("enable_seqscan", "enable_bitmapscan", "enable_sort"):
            cursor.execute(f"SET LOCAL {setting} = off")
        cursor.execute(f"EXPLAIN {sql}", params)
        return "\n".join(row[0] for row in cursor.fetchall())


def _exact_firm_wide(user, plan, reach, vector, layer) -> list:
    """The ORM reference, read without any index: the exact nearest visible notes of ``layer``.
    The firm-wide layers share one walk (their LIMITs summed), so a layer may get fewer than its
    own LIMIT: those must be its nearest."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        rows = (Note.objects.visible_to(user).active().with_embedding().filter(layer_filter(plan, reach, [layer]))
                .order_by(CosineDistance("embedding", vector))[:20])
        return [note.pk for note in rows]


def test_a_user_of_two_firms_gets_the_nearest_firm_wide_notes_of_both(world):
    vector = _firm_wide_notes(world)
    dana = UserFactory(username="dana")
    MembershipFactory(user=dana, firm=world.firm_a, role=Role.LAWYER)
    MembershipFactory(user=dana, firm=world.firm_b, role=Role.LAWYER)
    plan = make_plan(QUESTION, matter_id=None)
    assert {MemoryScope.GENERAL_LAW, MemoryScope.CROSS_CASE} <= set(plan.layers)
    reach = reach_of(dana)
    assert set(reach.firm_ids) == {world.firm_a.pk, world.firm_b.pk}

    explained = _explain(*note_statement_of(dana, plan, reach, vector))
    assert explained.count("Index Scan using note_embedding_firmwide_hnsw ") == 1, explained  # one walk

    by_layer, _keyword = read_candidates(dana, plan, reach, vector, [], per_layer=20)
    for layer in (MemoryScope.GENERAL_LAW, MemoryScope.CROSS_CASE):
        got = [c.note.pk for c in by_layer[layer]]
        assert len(got) >= 5
        assert got == _exact_firm_wide(dana, plan, reach, vector, layer)[: len(got)]
        assert {c.note.firm_id for c in by_layer[layer]} == {world.firm_a.pk, world.firm_b.pk}


@pytest.mark.parametrize("who", ["alice", "charlie"])
def test_each_member_gets_only_his_own_firms_notes_from_the_shared_walk(world, who):
    """alice (firm A) and charlie, the outsider to firm A (firm B): one walk in the shared index,
    and nothing of the other firm."""
    vector = _firm_wide_notes(world)
    user = getattr(world, who)
    own = world.firm_a if who == "alice" else world.firm_b
    plan = make_plan(QUESTION, matter_id=None)
    reach = reach_of(user)

    explained = _explain(*note_statement_of(user, plan, reach, vector))
    assert "Index Scan using note_embedding_firmwide_hnsw " in explained, explained

    by_layer, _keyword = read_candidates(user, plan, reach, vector, [], per_layer=20)
    for layer in (MemoryScope.GENERAL_LAW, MemoryScope.CROSS_CASE, MemoryScope.GLOBAL):
        if layer not in plan.layers:
            continue
        got = [c.note.pk for c in by_layer[layer]]
        assert len(got) >= 5
        assert got == _exact_firm_wide(user, plan, reach, vector, layer)[: len(got)]
        assert {c.note.firm_id for c in by_layer[layer]} == {own.pk}
