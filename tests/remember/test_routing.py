"""Routing ADD / UPDATE / IGNORE, linking and evolution, on real notes in PostgreSQL."""
from __future__ import annotations

import re

import pytest
from django.utils import timezone

from memory.models import AuditEvent, AuditLog, LinkType, MemoryScope, Note, NoteLink, RoutingDecision
from remember.routing import conflict_between, lexical_overlap, thresholds
from tests.remember.conftest import LAPTOP_REPLY, LAPTOP_USER

PURCHASE = "我在2024年3月5日花5999元买了一台笔记本电脑。"
PURCHASE_CORRECTED = "我在2024年3月5日花6999元买了一台笔记本电脑。"
NO_REPLY = "好的，我记下了这些信息，请继续补充。"


def decisions(turn) -> list[RoutingDecision]:
    return list(RoutingDecision.objects.filter(turn=turn).order_by("item_index"))


def test_new_items_are_added_as_case_notes_with_provenance(world, laptop_conversation, make_turn):
    turn = make_turn(laptop_conversation, LAPTOP_USER, LAPTOP_REPLY)
    purchase = Note.objects.get(content="当事人在2024年3月5日花5999元买了一台笔记本电脑。")
    assert (purchase.memory_scope, purchase.category, purchase.memory_type) == ("case", "fact", "event")
    assert purchase.matter == world.matter_laptop
    assert purchase.owner == world.alice
    assert purchase.conversation == laptop_conversation
    assert purchase.source_type == "chat"
    assert purchase.source_id == f"turn:{turn.pk}"
    assert purchase.source_message_ids == [turn.user_message_id]
    assert purchase.speaker == "alice"
    assert purchase.said_at == turn.user_message.said_at
    assert purchase.embedding is not None
    assert purchase.keywords
    assert purchase.context
    law = Note.objects.get(category="law")
    # a law note said in a matter's conversation stays behind that matter's wall
    assert law.memory_scope == MemoryScope.GENERAL_LAW
    assert law.matter == world.matter_laptop
    assert law.source_message_ids == [turn.assistant_message_id]
    assert law.speaker == "assistant"
    # bob is on the matter and sees the case notes; charlie (other firm) sees nothing
    assert Note.objects.visible_to(world.bob).filter(pk=purchase.pk).exists()
    assert not Note.objects.visible_to(world.charlie).exists()
    actions = [d.action for d in decisions(turn)]
    assert actions == ["add"] * 4  # nothing said is dropped by the router
    low = [d for d in decisions(turn) if "low confidence" in d.reason]
    assert len(low) == 1, [d.reason for d in decisions(turn)]
    assert low[0].note is not None, [d.reason for d in decisions(turn)]
    assert low[0].note.importance <= thresholds.ROUTING_LOW_CONFIDENCE_IMPORTANCE
    assert low[0].note.confidence <= thresholds.ROUTING_ADD_MIN_CONFIDENCE
    assert [d["action"] for d in turn.decisions] == actions


def test_same_fact_again_is_ignored_and_counted(world, laptop_conversation, make_turn):
    make_turn(laptop_conversation, PURCHASE, NO_REPLY)
    note = Note.objects.get()
    second = make_turn(laptop_conversation, PURCHASE, NO_REPLY)
    assert Note.objects.count() == 1
    decision = decisions(second)[0]
    assert decision.action == "ignore"
    assert "duplicate" in decision.reason
    assert decision.note == note
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
    assert "same event (date" in decision.reason
    assert "other value" in decision.reason
    assert decision.previous == old
    old.refresh_from_db()
    new = decision.note
    assert old.status == Note.Status.SUPERSEDED
    assert old.valid_to is not None
    assert old.superseded_by == new
    assert old.evolution_history[-1]["event"] == "superseded"
    assert new.status == Note.Status.ACTIVE
    assert "6999" in new.content
    assert new.evolution_history[-1]["previous_content"] == old.content
    assert NoteLink.objects.filter(source=new, target=old, link_type=LinkType.SUPERSEDES).exists()
    assert AuditLog.objects.filter(object_id=str(old.pk), event_type=AuditEvent.NOTE_SUPERSEDED).exists()
    assert list(Note.objects.active().values_list("pk", flat=True)) == [new.pk]


def test_negation_conflict_updates_the_landlords_position(world, make_turn):
    from tests.remember.factories import ConversationFactory

    deposit = ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit)
    old = world.note("房东已经退还了3000元押金。", matter=world.matter_deposit, confidence=0.7)
    turn = make_turn(deposit, "房东拒绝退还3000元押金。", NO_REPLY)
    decision = decisions(turn)[0]
    assert decision.action == "update", decision.reason
    assert "same statement negated" in decision.reason, decision.reason
    assert decision.previous == old
    old.refresh_from_db()
    assert old.status == Note.Status.SUPERSEDED
    assert old.superseded_by == decision.note


def test_conflict_with_less_confidence_is_kept_beside_and_linked_contradicts(world, laptop_conversation, make_turn):
    stored = world.note(PURCHASE_CORRECTED.replace("我", "当事人"), matter=world.matter_laptop, confidence=0.95)
    turn = make_turn(laptop_conversation, PURCHASE, NO_REPLY)  # offline confidence 0.8 < 0.95
    decision = decisions(turn)[0]
    assert decision.action == "add", decision.reason
    assert "better supported" in decision.reason, decision.reason
    assert Note.objects.active().count() == 2  # neither version is hidden
    assert NoteLink.objects.filter(source=decision.note, target=stored, link_type=LinkType.CONTRADICTS).exists()


def test_other_matters_are_not_neighbours(world, laptop_conversation, make_turn):
    other = world.note("当事人在2024年3月5日花5999元买了一台笔记本电脑。", matter=world.matter_deposit)
    make_turn(laptop_conversation, PURCHASE, NO_REPLY)
    assert Note.objects.filter(matter=world.matter_laptop).count() == 1
    other.refresh_from_db()
    assert other.mention_count == 1


def test_private_case_notes_route_within_the_owner(world, private_conversation, make_turn):
    world.note("当事人在2024年3月5日花5999元买了一台笔记本电脑。", owner=world.alice)  # alice's private note
    make_turn(private_conversation, PURCHASE, NO_REPLY)
    mine = Note.objects.get(owner=world.bob)
    assert mine.matter is None
    assert mine.memory_scope == "case"
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
    from tests.remember.factories import ConversationFactory

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
    assert 0.93 <= semantic.weight <= 1.0
    assert "cosine" in semantic.reason
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
    assert jaccard == 1.0
    assert overlap == 1.0


def test_statements_citing_different_articles_never_supersede_each_other():
    from remember.routing import conflict_between

    article_24 = "《消费者权益保护法》第二十四条规定，经营者提供的商品不符合质量要求的，消费者可以要求退货。"
    article_20 = "《消费者权益保护法》第二十条规定，经营者应当向消费者提供有关商品的真实信息。"
    assert conflict_between(article_24, article_20) is None
    assert conflict_between("房东已退还押金。", "房东拒绝退还押金。") == "negation on one side only"


# --- issue 11: only the same fact is superseded ---------------------------------------------

RENT_1 = "1月5日我支付了第一期租金3500元。"
RENT_2 = "2月5日我支付了第二期租金3500元。"


def _deposit_conversation(world):
    from tests.remember.factories import ConversationFactory

    return ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="租房押金")


def test_two_instalments_are_both_kept_and_linked_in_said_at_order(world, make_turn):
    conversation = _deposit_conversation(world)
    first_turn = make_turn(conversation, RENT_1, NO_REPLY, day=5)
    second_turn = make_turn(conversation, RENT_2, NO_REPLY, day=6)
    first, second = decisions(first_turn)[0].note, decisions(second_turn)[0]
    assert second.action == "add", second.reason
    assert "distinct event" in second.reason, second.reason
    assert "ordinal" in second.reason, second.reason
    assert second.previous == first  # the decision names the look-alike it was compared with
    assert set(Note.objects.values_list("status", flat=True)) == {Note.Status.ACTIVE}
    assert Note.objects.count() == 2
    assert NoteLink.objects.filter(source=first, target=second.note, link_type=LinkType.TEMPORAL_NEXT).exists()
    assert not NoteLink.objects.filter(link_type=LinkType.SUPERSEDES).exists()
    # both facts are there for alice (on the matter); bob (not on it) and charlie (other firm) see none
    assert Note.objects.visible_to(world.alice).filter(pk__in=[first.pk, second.note.pk]).count() == 2
    assert not Note.objects.visible_to(world.bob).exists()
    assert not Note.objects.visible_to(world.charlie).exists()


def test_a_later_said_sibling_is_linked_after_an_earlier_said_one(world, make_turn):
    """Imports can arrive out of order: temporal_next follows said-at, not storage order."""
    conversation = _deposit_conversation(world)
    later = world.note("2月5日当事人支付了第二期租金3500元。", matter=world.matter_deposit,
                       said_at=timezone.make_aware(timezone.datetime(2026, 3, 20, 10, 0)))
    turn = make_turn(conversation, RENT_1, NO_REPLY, day=5)
    earlier = decisions(turn)[0].note
    assert decisions(turn)[0].action == "add"
    assert NoteLink.objects.filter(source=earlier, target=later, link_type=LinkType.TEMPORAL_NEXT).exists()


@pytest.mark.end_to_end
def test_a_200_turn_import_of_transfers_supersedes_nothing(world):
    """Transfers TX…0000 – TX…0199 read alike (cosine ≈ 1) but are 200 distinct events."""
    from datetime import datetime, timedelta, timezone as tz

    from remember.ingest import import_transcript

    start = datetime(2026, 3, 1, 9, 0, tzinfo=tz.utc)
    messages = []
    for i in range(200):
        said = start + timedelta(minutes=10 * i)
        messages.append({"id": f"u{i}", "role": "user", "timestamp": said.isoformat(),
                         "content": f"我今天向房东转账3500元，转账单号TX2026030{i:04d}。"})
        messages.append({"id": f"a{i}", "role": "assistant", "timestamp": (said + timedelta(minutes=1)).isoformat(),
                         "content": "好的，已记录这笔转账。"})
    data = {"firm": "alpha", "conversations": [{"id": "transfers", "user": "alice", "matter":
                                                 world.matter_deposit.reference, "messages": messages}]}
    result = import_transcript(data, actor="system:test")
    assert result.turn_status == {"done": 200}, result.summary()
    assert result.decisions.get("update", 0) == 0, result.summary()
    transfers = Note.objects.filter(firm=world.firm_a, content__contains="转账单号TX")
    assert not transfers.exclude(status=Note.Status.ACTIVE).exists()
    ids = {note.content.split("TX")[1][:11] for note in transfers}
    assert ids == {f"2026030{i:04d}" for i in range(200)}  # no transfer lost
    reasons = RoutingDecision.objects.filter(action="add", previous__isnull=False).values_list("reason", flat=True)
    assert reasons
    assert all("transaction/document id" in r for r in reasons)
    assert not Note.objects.visible_to(world.charlie).exists()


def test_an_explicit_correction_updates_and_keeps_the_old_fact_in_history(world, make_turn):
    conversation = _deposit_conversation(world)
    make_turn(conversation, "我已经付了3万元定金。", NO_REPLY)
    old = Note.objects.get()
    turn = make_turn(conversation, "定金其实是2万元，之前说错了。", NO_REPLY)
    decision = decisions(turn)[0]
    assert decision.action == "update", decision.reason
    assert "explicit correction" in decision.reason, decision.reason
    assert "earnest_deposit" in decision.reason
    assert decision.previous == old
    old.refresh_from_db()
    assert old.status == Note.Status.SUPERSEDED
    assert old.valid_to is not None
    assert old.superseded_by == decision.note
    assert decision.note.evolution_history[-1]["previous_content"] == old.content
    assert list(Note.objects.active().values_list("content", flat=True)) == [decision.note.content]
    assert AuditLog.objects.filter(object_id=str(old.pk), event_type=AuditEvent.NOTE_SUPERSEDED).exists()


def test_a_negation_of_a_different_statement_is_added(world, make_turn):
    conversation = _deposit_conversation(world)
    returned = world.note("房东已经退还了3000元押金。", matter=world.matter_deposit)
    turn = make_turn(conversation, "房东拒绝承担3000元维修费。", NO_REPLY)
    decision = decisions(turn)[0]
    assert decision.action == "add", decision.reason
    returned.refresh_from_db()
    assert returned.status == Note.Status.ACTIVE
    assert Note.objects.active().count() == 2


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        ("1月5日用户支付了第一期租金3500元。", "2月5日用户支付了第二期租金3500元。", "distinct_event"),
        ("用户转账3500元，转账单号TX20260301000。", "用户转账3500元，转账单号TX20260301001。", "distinct_event"),
        ("张伟向用户借了5000元。", "李娜向用户借了5000元。", "distinct_event"),
        ("3月1日用户向房东转账3500元。", "4月1日用户向房东转账3500元。", "distinct_event"),
        ("用户已经付了3万元定金。", "定金其实是2万元，之前说错了。", "correction"),
        ("The client paid a deposit of $3,000.", "Correction: the deposit was actually $2,000.", "correction"),
        ("The repair quote was $800.", "The repair quote was not $800 but $1,200.", "correction"),
        ("月租金是3500元。", "月租金是3800元。", "value_change"),
        ("The landlord returned the $1,000 deposit.", "The landlord refused to return the $1,000 deposit.", "negation"),
        ("房东已经退还了3000元押金。", "房东没有修好热水器。", "other"),
        ("The client transferred $3,500 to the landlord.", "The client transferred $3,800 to the landlord.",
         "distinct_event"),
        ("用户于3月5日支付了3500元租金。", "用户在3月5日支付了3500元租金。", "duplicate"),
        ("The landlord has returned the deposit.", "The landlord returned the deposit.", "duplicate"),
        ("定金为2万元。", "押金为2万元。", "other"),
        # a correction of one value never supersedes a note that says more than that value
        # … a note that says more than the value is revised instead (slots.revision) …
        ("用户已经付了3万元定金，房东承诺月底前交房。", "定金其实是2万元。", "correction"),
        ("用户支付了3万元定金和5000元中介费。", "定金其实是2万元。", "other"),
        # a long digit run is an id; a phone number is corrected only with a cue
        ("发票号码04411200的金额为5999元。", "发票号码04411201的金额为5999元。", "distinct_event"),
        ("客户的电话是13800001111。", "客户的电话其实是13900002222。", "correction"),
        ("客户的电话是13800001111。", "客户的电话是13900002222。", "distinct_event"),
        ("订单号DD100234的商品已签收。", "其实订单号DD100235的商品已签收。", "distinct_event"),
        # unrelated statements with other dates are new, not siblings
        ("电脑在2026年2月27日开始出现花屏。", "用户在2026年3月9日把电脑寄回京东售后。", "other"),
    ],
)
def test_slot_comparison(old, new, kind):
    from remember.routing import compare

    assert compare(new, old).kind.value == kind


@pytest.mark.end_to_end
def test_the_shipped_routing_set_keeps_supersede_precision_above_098(db):
    """The labelled pairs through the real routing path (embeddings, pgvector, writes),
    rolled back: the bar of issue 11 on both the tuning and the held-out half."""
    from evaluation.routing import evaluate_routing, load_pairs
    from memory.models import Firm

    data = load_pairs()
    assert len(data["pairs"]) >= 150
    assert {p["lang"] for p in data["pairs"]} == {"zh", "en"}
    firms = Firm.objects.count()
    report = evaluate_routing(data)
    assert Firm.objects.count() == firms
    assert not Note.objects.exists()  # rolled back
    for half in (report.slice(held_out=False), report.slice(held_out=True)):
        assert half.supersede_precision >= 0.98, "\n".join(report.lines())
        assert half.false_supersession_rate <= 0.02, "\n".join(report.lines())
        assert half.supersede_recall >= 0.8, "\n".join(report.lines())
    assert report.slice().confusion[("ignore", "ignore")] == sum(p["expected"] == "ignore" for p in data["pairs"])


def test_evaluate_routing_command_prints_the_figures_and_every_wrong_pair(db, tmp_path, capsys):
    import json

    from django.core.management import call_command

    pairs = {"pairs": [
        {"id": "p1", "lang": "zh", "kind": "instalment", "expected": "add", "held_out": False,
         "old": "1月5日用户支付了第一期租金3500元。", "new": "2月5日用户支付了第二期租金3500元。"},
        # deliberately mislabelled: the report must show it with routing's reason
        {"id": "p2", "lang": "en", "kind": "consecutive_id", "expected": "update", "held_out": True,
         "old": "Order DD100234 was delivered.", "new": "Order DD100235 was delivered."},
    ]}
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps(pairs, ensure_ascii=False), encoding="utf-8")
    call_command("evaluate_routing", "--pairs", str(path))
    out = capsys.readouterr().out
    assert "routing pairs: 2 (1 zh, 1 en; 1 held out)" in out
    assert "precision" in out
    assert "recall" in out
    assert "confusion" in out
    assert "wrong pairs: 1" in out
    assert "p2 (held out) [consecutive_id] expected update, routed add" in out
    assert "other transaction/document id" in out
    assert not Note.objects.exists()  # rolled back


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "cannot read the routing pairs"),
        ('{"pairs": []}', "non-empty 'pairs' list"),
        ('{"pairs": [{"id": "x", "lang": "zh", "kind": "k", "expected": "update", "new": "b"}]}',
         "pairs[0]: missing 'old' text"),
        ('{"pairs": [{"id": "x", "lang": "zh", "kind": "k", "expected": "merge", "old": "a", "new": "b"}]}',
         "expected must be one of update, add, ignore"),
    ],
)
def test_evaluate_routing_refuses_a_bad_pairs_file_clearly(db, tmp_path, content, message):
    from django.core.management import CommandError, call_command

    path = tmp_path / "pairs.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(CommandError, match=re.escape(message)):
        call_command("evaluate_routing", "--pairs", str(path))
    assert not Note.objects.exists()
