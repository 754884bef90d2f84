"""The one-statement candidate read (raw SQL on the hot path): it must return exactly what the
ORM reads return under ``visible_to(user)`` — never a note of another firm, behind the ethical
wall, or someone else's profile — and take part in every layered search."""
from __future__ import annotations

import pytest

from memory.embeddings import get_embedder
from memory.models import Note
from memory.retrieval import candidates as cand
from memory.retrieval import search_memory
from memory.retrieval.plan import make_plan

pytestmark = pytest.mark.django_db

QUESTIONS = ["电脑花屏检测报告", "押金 交接照片", "并购估值", "我的偏好是什么", "Beta 客户的检测报告", "退货"]


def _orm_vector(user, plan, reach, vector, per_layer):
    """The ORM reference: per layer, the exact nearest visible notes (no raw SQL)."""
    found = {}
    for layer in plan.layers:
        rows = (
            Note.objects.visible_to(user).active().with_embedding()
            .filter(cand.layer_filter(plan, reach, [layer]))
            .order_by(cand.CosineDistance("embedding", vector))[:per_layer]
        )
        found[layer] = [note.pk for note in rows]
    return found


@pytest.mark.parametrize("who", ["alice", "bob", "charlie"])
@pytest.mark.parametrize("matter", [None, "matter_laptop"])
def test_fast_read_matches_the_orm_and_stays_visible(world, memory, who, matter):
    user = getattr(world, who)
    matter_id = getattr(world, matter).pk if matter else None
    if matter_id is not None and not world.matter_laptop.assignments.filter(user=user).exists():
        matter_id = None
    visible = set(Note.objects.visible_to(user).values_list("pk", flat=True))
    for question in QUESTIONS:
        vector = get_embedder().embed_query(question)
        plan = make_plan(question, matter_id=matter_id)
        reach = cand.reach_of(user)
        fast = cand.read_candidates(user, plan, reach, vector, cand.query_tokens(question), per_layer=20)
        assert fast is not None, "the layered search must use the one-statement read"
        by_layer, keyword = fast
        got = {c.note.pk for found in by_layer.values() for c in found} | {c.note.pk for c in keyword}
        assert got <= visible, "a candidate outside visible_to(user)"
        # Tiny layers are read exactly: the same notes as the ORM's exact per-layer read.
        reference = _orm_vector(user, plan, reach, vector, per_layer=50)
        for layer, found in by_layer.items():
            assert [c.note.pk for c in found] == reference[layer][: len(found)]
            assert len(found) == min(len(reference[layer]), cand.LATER_LAYER_LIMIT if layer != plan.layers[0] else 20)
        for c in keyword:
            assert c.via_keyword and c.keyword_rank is not None


def test_layered_search_never_returns_an_invisible_note(world, memory):
    for user in (world.alice, world.bob, world.charlie):
        visible = set(Note.objects.visible_to(user).values_list("pk", flat=True))
        for question in QUESTIONS:
            result = search_memory(user, question, k=20)
            assert {hit.note.pk for hit in result.hits} <= visible
            assert result.timings["keyword"] == 0.0  # the keyword read went with the vector statement
