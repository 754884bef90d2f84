"""search_memory: layered recall under the visibility rule, with alice, bob (walled off from
matter_deposit) and charlie (another firm) in every access test."""
from __future__ import annotations

import numpy as np
import pytest

from infra.embeddings import get_embedder
from memory.models import LinkType, MemoryScope, Note
from recall import (
    InvalidSearch,
    NotFound,
    UnknownStrategy,
    register_strategy,
    registered_strategies,
    search_memory,
    unregister_strategy,
)
from recall.scoring import W_GRAPH, W_RECENCY, W_RELEVANCE, W_SUPPORT
from memory.services.notes import correct_note, link_notes

pytestmark = pytest.mark.django_db

QUESTIONS = [
    "这个电脑花屏纠纷下一步怎么走？",
    "押金被扣了怎么办",
    "并购估值",
    "我的偏好是什么",
    "为什么需要检测报告",
    "Beta 客户的检测报告",
    "消费者质量问题退货",
]


def keys(result, memory) -> list[str]:
    by_id = {note.id: key for key, note in memory.items()}
    return [by_id.get(hit.note.id, "?") for hit in result.hits]


def all_keys(user, memory, **kwargs) -> set[str]:
    seen: set[str] = set()
    for question in QUESTIONS:
        for strategy in ("layered", "semantic"):
            seen |= set(keys(search_memory(user, question, k=20, strategy=strategy, **kwargs), memory))
    return seen


def test_alice_never_sees_the_secret_matter_bobs_profile_or_another_firm(world, memory):
    seen = all_keys(world.alice, memory)
    assert seen <= {"laptop_screen", "laptop_report", "deposit_fact", "deposit_photos", "alice_profile",
                    "law", "cross", "procedure"}
    assert {"laptop_report", "deposit_fact", "alice_profile"} <= seen


def test_bob_is_walled_off_from_the_deposit_matter_and_alices_profile(world, memory):
    seen = all_keys(world.bob, memory)
    assert seen <= {"laptop_screen", "laptop_report", "bob_profile", "law", "cross", "procedure"}
    assert "laptop_report" in seen
    assert "bob_profile" in seen


def test_charlie_of_another_firm_only_sees_his_firm(world, memory):
    assert all_keys(world.charlie, memory) <= {"beta_fact", "beta_law"}
    assert "beta_fact" in all_keys(world.charlie, memory)


def test_current_matter_facts_come_first_and_other_matters_stay_out(world, memory):
    result = search_memory(world.alice, "这个电脑花屏纠纷下一步怎么走？", k=10, matter_id=world.matter_laptop.pk)
    found = keys(result, memory)
    assert found[0] in {"laptop_screen", "laptop_report"}
    assert "deposit_fact" not in found
    assert "deposit_photos" not in found
    case_hits = [hit for hit in result.hits if hit.layer == "case"]
    assert all(hit.note.matter_id == world.matter_laptop.pk for hit in case_hits)
    assert result.plan.layers[0] == "case"
    assert result.plan.matter_id == world.matter_laptop.pk


def test_matters_behind_the_wall_or_in_another_firm_are_not_found(world, memory):
    with pytest.raises(NotFound):
        search_memory(world.bob, "押金", matter_id=world.matter_deposit.pk)
    with pytest.raises(NotFound):
        search_memory(world.charlie, "电脑", matter_id=world.matter_laptop.pk)
    with pytest.raises(NotFound):
        search_memory(world.alice, "电脑", matter_id=world.matter_b.pk)
    with pytest.raises(NotFound):
        search_memory(world.alice, "并购", matter_id=world.matter_secret.pk)


def test_breakdown_follows_the_documented_formula(world, memory):
    result = search_memory(world.alice, "电脑花屏 检测报告", k=5, matter_id=world.matter_laptop.pk)
    assert result.hits
    for hit in result.hits:
        b = hit.breakdown
        relevance = 0.75 * b.semantic + 0.25 * b.keyword
        support = 0.5 * b.importance + 0.5 * b.confidence
        fused = W_RELEVANCE * relevance + W_GRAPH * b.graph + W_RECENCY * b.recency + W_SUPPORT * support
        assert b.total == pytest.approx(fused * b.layer_weight, abs=1e-3)
        assert set(b.as_dict()) >= {"semantic", "keyword", "importance", "confidence", "graph", "recency", "total"}
        assert hit.reasons
        assert "检索顺序" in hit.reasons[0]
    top = result.hits[0]
    assert top.breakdown.keyword > 0
    assert any("共同词语" in reason for reason in top.reasons)
    # Hits are ordered by the rank fusion of the note ranking and the raw-message rankings.
    assert [hit.breakdown.fused for hit in result.hits] == sorted(
        (hit.breakdown.fused for hit in result.hits), reverse=True)
    assert all(any(reason.startswith("综合排名") for reason in hit.reasons) for hit in result.hits)
    assert {"plan", "embed", "anchors", "vector", "keyword", "total"} <= set(result.timings)


def test_persona_questions_put_the_profile_first(world, memory):
    result = search_memory(world.alice, "我的偏好是什么？", k=3)
    assert result.plan.layers[0] == MemoryScope.USER_PROFILE
    assert keys(result, memory)[0] == "alice_profile"
    bob_result = search_memory(world.bob, "我的偏好是什么？", k=3)
    assert keys(bob_result, memory)[0] == "bob_profile"


def test_superseded_notes_are_not_recalled(world, memory):
    old = memory["laptop_report"]
    Note.objects.filter(pk=old.pk).update(status=Note.Status.SUPERSEDED)
    result = search_memory(world.alice, "电脑花屏检测报告", k=20, matter_id=world.matter_laptop.pk)
    assert old.pk not in {hit.note.pk for hit in result.hits}


def test_a_corrected_note_is_found_by_its_new_words(world, memory):
    correct_note(memory["procedure"], {"content": "办案流程：先做证据保全公证。"}, actor=world.alice)
    result = search_memory(world.bob, "证据保全公证", k=3, scopes=["global"])
    assert [hit.note.pk for hit in result.hits] == [memory["procedure"].pk]


def test_explicit_reference_searches_only_visible_conversations(world, memory, laptop_conversation):
    conversation, messages = laptop_conversation
    result = search_memory(world.alice, "你之前说过检测报告怎么做？", conversation=conversation)
    assert result.plan.search_messages
    assert messages[1].pk in {m.message.pk for m in result.messages}
    assert result.plan.matter_id == world.matter_laptop.pk  # taken from the conversation
    with pytest.raises(NotFound):
        search_memory(world.bob, "你之前说过检测报告怎么做？", conversation=conversation)
    with pytest.raises(NotFound):
        search_memory(world.charlie, "你之前说过检测报告怎么做？", conversation=conversation.pk)
    # Without a conversation, bob's and charlie's explicit references never reach alice's messages.
    for user in (world.bob, world.charlie):
        assert search_memory(user, "你之前说过检测报告怎么做？").messages == []


def test_notes_sourced_from_the_referenced_message_are_recalled(world, memory, laptop_conversation):
    conversation, messages = laptop_conversation
    sourced = world.note("售后检测结论待出，预计三个工作日。", matter=world.matter_laptop,
                         conversation=conversation, source_message_ids=[messages[1].pk])
    result = search_memory(world.alice, "你之前说过官方售后保留聊天记录", k=10, conversation=conversation)
    hit = next(hit for hit in result.hits if hit.note.pk == sourced.pk)
    assert any("来自问题所提到的对话" in reason for reason in hit.reasons)


def _plan_as_at_scale() -> None:
    """Make this test's transaction plan reads as PostgreSQL does at 100k notes: from indexes,
    ordered by an index where one can (no sequential scan, no bitmap, no sort), a walk meeting
    10 notes (``hnsw.ef_search``)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; "
                       "SET LOCAL enable_sort = off; SET LOCAL hnsw.ef_search = 10")


def test_a_history_question_finds_superseded_notes_behind_many_nearer_active_ones(world, memory):
    """When the planner walks the HNSW index for the superseded notes (a large share of them at
    scale), the walk goes on until it has them (iterative scan), instead of keeping the few of
    its first nearest notes. bob sees the superseded note of his matter; charlie, not on it,
    none."""
    from recall.candidate_sql import superseded_candidates
    from recall.plan import make_plan
    from recall.reach import reach_of

    old = world.note("售后网点收费标准：三百元（旧价目表）。", matter=world.matter_laptop)
    Note.objects.filter(pk=old.pk).update(status=Note.Status.SUPERSEDED)
    for index in range(30):
        world.note(f"电脑花屏检测费以前是多少？第 {index} 次询问。", matter=world.matter_laptop)
    _plan_as_at_scale()
    vector = np.asarray(get_embedder().embed_query("电脑花屏检测费以前是多少"))
    plan = make_plan("电脑花屏检测费以前是多少", matter_id=None, conversation_id=None, scopes=None)
    assert plan.history
    for user, sees in ((world.alice, True), (world.bob, True), (world.charlie, False)):
        found = superseded_candidates(user, plan, reach_of(user), vector, limit=20)
        assert (old.pk in {c.note.pk for c in found}) == sees, user.username
        assert all(c.note.status == Note.Status.SUPERSEDED for c in found)


def test_the_notes_a_message_became_are_found_among_many_nearer_notes(world, memory, laptop_conversation):
    """At scale the planner reads indexes, not the table: ordered by the bare distance, the read
    walked the HNSW index, met its ``ef_search`` nearest notes (40 of 100k) and kept those that
    came from the messages — none. Made to plan as at scale here (``_plan_as_at_scale``, for
    this transaction only), the note a message
    became still comes back behind 30 nearer ones; bob, who is on the matter, gets it too, and
    charlie, who is not, gets nothing."""
    from recall.note_loading import notes_from_messages
    from recall.plan import make_plan
    from recall.reach import reach_of

    conversation, messages = laptop_conversation
    sourced = world.note("快递单号 SF1234 已寄出。", matter=world.matter_laptop, conversation=conversation,
                         source_message_ids=[messages[1].pk])
    for index in range(30):
        world.note(f"电脑花屏送检，检测报告第 {index} 页。", matter=world.matter_laptop)
    _plan_as_at_scale()
    vector = np.asarray(get_embedder().embed_query("电脑花屏检测报告"))
    for user, expected in ((world.alice, {sourced.pk}), (world.bob, {sourced.pk}), (world.charlie, set())):
        plan = make_plan("你之前说过电脑花屏检测报告", matter_id=None, conversation_id=None, scopes=None)
        found = notes_from_messages(user, plan, reach_of(user), [messages[1].pk, messages[0].pk],
                                    vector, limit=20)
        assert {c.note.pk for c in found} == expected, user.username


def test_graph_expansion_follows_visible_links_only(world, memory):
    w = world
    cause = w.note("商家拒绝退货的理由是屏幕有外力挤压痕迹。", matter=w.matter_laptop, confidence=0.9)
    link_notes(memory["laptop_report"], cause, link_type=LinkType.SUPPORTS, weight=0.9, actor="system:test")
    link_notes(memory["laptop_report"], memory["deposit_fact"], link_type=LinkType.MENTIONS, weight=0.9,
               actor="system:test")
    low = w.note("据说可能是显卡驱动问题（未证实）。", matter=w.matter_laptop, confidence=0.3)
    link_notes(memory["laptop_report"], low, link_type=LinkType.SUPPORTS, weight=0.9, actor="system:test")

    result = search_memory(w.alice, "为什么电脑花屏需要检测报告？", k=10, matter_id=w.matter_laptop.pk)
    assert result.plan.graph_expansion
    by_id = {hit.note.pk: hit for hit in result.hits}
    assert cause.pk in by_id
    assert by_id[cause.pk].breakdown.graph > 0
    assert any("相关，经由" in reason and str(LinkType.SUPPORTS.label) in reason for reason in by_id[cause.pk].reasons)
    # Pruned from expansion (confidence < 0.6): it may still be a direct candidate, but gets no graph score.
    assert low.pk not in by_id or by_id[low.pk].breakdown.graph == 0
    assert memory["deposit_fact"].pk not in by_id  # another matter: outside the planned case layer

    bob_result = search_memory(w.bob, "为什么电脑花屏需要检测报告？", k=20)
    assert memory["deposit_fact"].pk not in {hit.note.pk for hit in bob_result.hits}
    charlie_result = search_memory(w.charlie, "为什么电脑花屏需要检测报告？", k=20)
    assert {hit.note.firm_id for hit in charlie_result.hits} <= {w.firm_b.pk}


def test_semantic_strategy_ranks_by_cosine_only(world, memory):
    result = search_memory(world.alice, "电脑花屏", k=5, strategy="semantic")
    totals = [hit.breakdown.total for hit in result.hits]
    assert totals == sorted(totals, reverse=True)
    assert all(hit.breakdown.total == pytest.approx(hit.breakdown.semantic, abs=1e-4) for hit in result.hits)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"query": ""}, "query"),
        ({"query": "   "}, "query"),
        ({"query": "电" * 2001}, "query"),
        ({"query": "x", "k": 0}, "k"),
        ({"query": "x", "k": 51}, "k"),
        ({"query": "x", "k": True}, "k"),
        ({"query": "x", "scopes": ["nope"]}, "scopes"),
        ({"query": "x", "scopes": []}, "scopes"),
        ({"query": "x", "matter_id": "1"}, "matter"),
        ({"query": "x", "matter_id": 10**30}, "matter"),
    ],
)
def test_bad_input_is_rejected_clearly(world, kwargs, field):
    query = kwargs.pop("query")
    with pytest.raises(InvalidSearch) as error:
        search_memory(world.alice, query, **kwargs)
    assert error.value.field == field


def test_unknown_strategy_lists_the_registered_ones(world):
    with pytest.raises(UnknownStrategy) as error:
        search_memory(world.alice, "电脑", strategy="magic")
    assert "layered" in str(error.value)
    assert "semantic" in str(error.value)


def test_other_apps_can_register_a_strategy(world, memory):
    from recall import get_strategy

    def layered_twice(request):
        result = get_strategy("layered")(request)
        result.strategy = request.strategy
        return result

    register_strategy("test_wrapped", layered_twice)
    try:
        assert "test_wrapped" in registered_strategies()
        result = search_memory(world.bob, "电脑花屏", strategy="test_wrapped")
        assert result.strategy == "test_wrapped"
        assert result.hits
        with pytest.raises(ValueError):
            register_strategy("test_wrapped", lambda request: None)
    finally:
        unregister_strategy("test_wrapped")
    assert "test_wrapped" not in registered_strategies()
