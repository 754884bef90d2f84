"""Routing ADD / UPDATE / IGNORE, linking and evolution, on real notes in PostgreSQL."""
from __future__ import annotations

import pytest

from memory.models import AuditEvent, AuditLog, LinkType, MemoryScope, Note, NoteLink, RoutingDecision
from memory.pipeline.routing import conflict_between, lexical_overlap
from tests.pipeline.conftest import LAPTOP_REPLY, LAPTOP_USER

PURCHASE = "我在2024年3月5日花5999元买了一台笔记本电脑。"
PURCHASE_CORRECTED = "我在2024年3月5日花6999元买了一台笔记本电脑。"
NO_REPLY = "好的，我记下了这些信息，请继续补充。"


def decisions(turn) -> list[RoutingDecision]:
    return list(RoutingDecision.objects.filter(turn=turn).order_by("item_index"))


def test_new_items_are_added_as_case_notes_with_provenance(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    purchase = Note.objects.get(content="用户在2024年3月5日花5999元买了一台笔记本电脑。")
    assert (purchase.memory_scope, purchase.category, purchase.memory_type) == ("case", "fact", "event")
    assert purchase.matter == world.matter_laptop and purchase.owner == world.alice
    assert purchase.conversation == laptop_conversation and purchase.source_type == "chat"
    assert purchase.source_id == f"turn:{turn.pk}"
    assert purchase.source_message_ids == [turn.user_message_id]
    assert purchase.speaker == "alice" and purchase.said_at == turn.user_message.said_at
    assert purchase.embedding is not None and purchase.keywords and purchase.context
    law = Note.objects.get(category="law")
    # a law note said in a matter's conversation stays behind that matter's wall
    assert law.memory_scope == MemoryScope.GENERAL_LAW and law.matter == world.matter_laptop
    assert law.source_message_ids == [turn.assistant_message_id] and law.speaker == "assistant"
    # bob is on the matter and sees the case notes; charlie (other firm) sees nothing
    assert Note.objects.visible_to(world.bob).filter(pk=purchase.pk).exists()
    assert not Note.objects.visible_to(world.charlie).exists()
    actions = [d.action for d in decisions(turn)]
    assert actions.count("add") == 3 and actions.count("ignore") == 1
    low = [d for d in decisions(turn) if d.action == "ignore"][0]
    assert "low quality" in low.reason and low.note is None
    assert [d["action"] for d in turn.decisions] == actions


def test_same_fact_again_is_ignored_and_counted(world, laptop_conversation, make_turn):
    make_turn(laptop_conversation, PURCHASE, NO_REPLY)
    note = Note.objects.get()
    second = make_turn(laptop_conversation, PURCHASE, NO_REPLY)
    assert Note.objects.count() == 1
    decision = decisions(second)[0]
    assert decision.action == "ignore" and "duplicate" in decision.reason and decision.note == note
    note.refresh_from_db()
    assert note.mention_count == 2
    assert note.evolution_history[-1]["event"] == "mentioned"
    assert second.user_message_id in note.source_message_ids
    assert AuditLog.objects.filter(object_id=str(note.pk), event_type=AuditEvent.NOTE_UPDATED).exists()


def test_changed_amount_updates_and_keeps_the_old_version(world, laptop_conversation, make_turn):
    make_turn(laptop_conversation, PURCHASE, NO_REPLY)
    old = Note.objects.get()
    turn = make_turn(laptop_conversation, PURCHASE_CORRECTED, NO_REPLY)
    decision = decisions(turn)[0]
    assert decision.action == "update", decision.reason
    assert "different numbers" in decision.reason and decision.previous == old
    old.refresh_from_db()
    new = decision.note
    assert old.status == Note.Status.SUPERSEDED and old.valid_to is not None and old.superseded_by == new
    assert old.evolution_history[-1]["event"] == "superseded"
    assert new.status == Note.Status.ACTIVE and "6999" in new.content
    assert new.evolution_history[-1]["previous_content"] == old.content
    assert NoteLink.objects.filter(source=new, target=old, link_type=LinkType.SUPERSEDES).exists()
    assert AuditLog.objects.filter(object_id=str(old.pk), event_type=AuditEvent.NOTE_SUPERSEDED).exists()
    assert list(Note.objects.active().values_list("pk", flat=True)) == [new.pk]


def test_negation_conflict_updates_the_landlords_position(world, make_turn):
    from tests.pipeline.factories import ConversationFactory

    deposit = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    old = world.note("房东已经退还了3000元押金。", matter=world.matter_deposit, confidence=0.7)
    turn = make_turn(deposit, "房东拒绝退还3000元押金。", NO_REPLY)
    decision = decisions(turn)[0]
    assert decision.action == "update" and "negation" in decision.reason, decision.reason
    assert decision.previous == old


def test_conflict_with_less_confidence_is_ignored(world, laptop_conversation, make_turn):
    world.note(PURCHASE_CORRECTED.replace("我", "用户"), matter=world.matter_laptop, confidence=0.95)
    turn = make_turn(laptop_conversation, PURCHASE, NO_REPLY)  # offline confidence 0.8 < 0.95
    decision = decisions(turn)[0]
    assert decision.action == "ignore" and "better supported" in decision.reason
    assert Note.objects.active().count() == 1


def test_other_matters_are_not_neighbours(world, laptop_conversation, make_turn):
    other = world.note("用户在2024年3月5日花5999元买了一台笔记本电脑。", matter=world.matter_deposit)
    make_turn(laptop_conversation, PURCHASE, NO_REPLY)
    assert Note.objects.filter(matter=world.matter_laptop).count() == 1
    other.refresh_from_db()
    assert other.mention_count == 1


def test_private_case_notes_route_within_the_owner(world, private_conversation, make_turn):
    world.note("用户在2024年3月5日花5999元买了一台笔记本电脑。", owner=world.alice)  # alice's private note
    make_turn(private_conversation, PURCHASE, NO_REPLY)
    mine = Note.objects.get(owner=world.bob)
    assert mine.matter is None and mine.memory_scope == "case"
    assert Note.objects.visible_to(world.bob).count() == 1


def test_links_temporal_and_supports(world, laptop_conversation, make_turn):
    make_turn(laptop_conversation, "笔记本电脑在购买后约两周出现大面积花屏。", NO_REPLY)
    fact = Note.objects.get()
    make_turn(laptop_conversation, "我已经保存了电子发票、付款截图、花屏照片和三次客服录音。", NO_REPLY)
    evidence = Note.objects.get(category="evidence")
    links = {(l.source_id, l.target_id, l.link_type) for l in NoteLink.objects.all()}
    assert (fact.pk, evidence.pk, LinkType.TEMPORAL_NEXT) in links
    assert (evidence.pk, fact.pk, LinkType.SUPPORTS) in links
    assert AuditLog.objects.filter(event_type=AuditEvent.LINK_CREATED).count() == len(links)


def test_same_matter_link_across_conversations(world, laptop_conversation, make_turn):
    from tests.pipeline.factories import ConversationFactory

    make_turn(laptop_conversation, "笔记本电脑在购买后约两周出现大面积花屏。", NO_REPLY)
    first = Note.objects.get()
    bobs = ConversationFactory(user=world.bob, firm=world.firm_a, matter=world.matter_laptop)
    make_turn(bobs, "商家以可能存在人为损坏为由拒绝直接退换。", NO_REPLY)
    second = Note.objects.exclude(pk=first.pk).get()
    assert NoteLink.objects.filter(source=second, target=first, link_type=LinkType.SAME_MATTER).exists()


def test_close_neighbour_evolves(world, laptop_conversation, make_turn):
    base = world.note("笔记本电脑出现花屏。", matter=world.matter_laptop, tags=["事实"], context="")
    make_turn(laptop_conversation, "笔记本电脑在购买后约两周出现大面积花屏。", NO_REPLY)
    base.refresh_from_db()
    new = Note.objects.exclude(pk=base.pk).get()
    semantic = NoteLink.objects.get(source=new, target=base, link_type=LinkType.SEMANTIC)
    assert 0.93 <= semantic.weight <= 1.0 and "cosine" in semantic.reason
    assert "电脑花屏纠纷" in base.tags
    assert base.context  # filled from the new note
    assert base.evolution_history[-1]["event"] == "evolved"
    assert AuditLog.objects.filter(object_id=str(base.pk), event_type=AuditEvent.NOTE_EVOLVED).exists()


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("用户花5999元买了电脑。", "用户花6999元买了电脑。", "different numbers"),
        ("商家拒绝退换。", "商家同意退换。", "negation"),
        ("商家同意退换。", "商家同意退换货。", None),
        ("用户花3000元买了手机，手机屏幕碎了。", "用户花5000元买了冰箱，冰箱漏水。", None),
    ],
)
def test_conflict_signals(a, b, expected):
    why = conflict_between(a, b)
    assert (why is None) if expected is None else (expected in why)


def test_lexical_overlap_ignores_digits():
    jaccard, overlap = lexical_overlap("用户花5999元买了电脑", "用户花6999元买了电脑")
    assert jaccard == 1.0 and overlap == 1.0


def test_statements_citing_different_articles_never_supersede_each_other():
    from memory.pipeline.routing import conflict_between

    article_24 = "《消费者权益保护法》第二十四条规定，经营者提供的商品不符合质量要求的，消费者可以要求退货。"
    article_20 = "《消费者权益保护法》第二十条规定，经营者应当向消费者提供有关商品的真实信息。"
    assert conflict_between(article_24, article_20) is None
    assert conflict_between("房东已退还押金。", "房东拒绝退还押金。") == "negation on one side only"
