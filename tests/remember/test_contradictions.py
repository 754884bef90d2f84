"""Two current notes of one slot with other values: routing keeps both (precision first) and links
them ``contradicts``; search flags both and puts the newer statement first; a correction settles
them, audited. Through the real write path (offline engine) and the real search."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.utils import translation

from memory.contradictions import contradictions_for
from memory.models import AuditEvent, AuditLog, LinkType, Note, NoteLink, RoutingDecision
from remember.routing.disagreement import disagreement
from recall import search_memory
from memory.services.notes import correct_note, forget_note
from tests.remember.factories import ConversationFactory, at

FIRST = "租期在2026年2月28日到期，我当天退了房并交还了钥匙。房东说墙面有污渍，要扣2000元押金。"
CHANGED = "房东今天改口了，房东说墙面有污渍，要扣3000元押金。"
ADDED = "房东今天又发微信说，除了墙面污渍，沙发也有破损，要再扣1000元押金。"
REPLY = "扣款金额前后不一致，说明房东的扣款依据并不确定，可以在协商时指出这一点。"


@pytest.mark.parametrize("newer, older, values", [
    (CHANGED, "房东说墙面有污渍，要扣2000元押金。", "3000 vs 2000"),
    ("月租金是3800元。", "月租金是3500元。", "3800 vs 3500"),
    ("The landlord now says he will keep $3,000 of the security deposit for wall stains.",
     "The landlord says he will keep $2,000 of the security deposit for wall stains.", "3000 vs 2000"),
])
def test_the_same_slot_with_another_value_disagrees(newer, older, values):
    assert disagreement(newer, older) == values


@pytest.mark.parametrize("newer, older", [
    (ADDED, "房东说墙面有污渍，要扣2000元押金。"),  # an additional deduction, not another value
    ("押金是7000元。", "房东说墙面有污渍，要扣2000元押金。"),  # the deposit and a deduction from it
    ("3月1日付了3000元定金。", "付了2000元定金给房东。"),  # two payments
    ("用户2026年2月5日支付第二期租金3500元。", "用户2026年1月5日支付第一期租金3500元。"),  # instalments
    ("房东说墙面有污渍，要扣2000元押金。", "房东说墙面有污渍，要扣2000元押金。"),  # the same statement
    # a wish with a bound is not a stated value (the story's overtime demand and the settlement)
    ("公司在2026年3月30日同意补发加班费6.5万元。", "alice说：用户希望公司至少补发6万元加班费，否则用户就申请劳动仲裁。"),
])
def test_other_events_and_additions_do_not_disagree(newer, older):
    assert disagreement(newer, older) is None


@pytest.fixture
def deposit_conversation(world):
    """alice's conversation on the deposit matter (bob is walled off from it, charlie is another firm's)."""
    return ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="押金")


def _deduction_notes() -> tuple[Note, Note]:
    old = Note.objects.get(content__contains="2000元押金")
    new = Note.objects.get(content__contains="3000元押金")
    return old, new


def test_routing_keeps_both_and_links_them_contradicts(world, deposit_conversation, make_turn):
    make_turn(deposit_conversation, FIRST, "", day=1)
    turn = make_turn(deposit_conversation, CHANGED, REPLY, day=3)
    old, new = _deduction_notes()
    assert old.status == new.status == Note.Status.ACTIVE  # nothing superseded: both were said
    link = NoteLink.objects.get(link_type=LinkType.CONTRADICTS)
    assert (link.source, link.target) == (new, old)
    assert link.reason == "same slot, other value: 3000 vs 2000"
    decision = RoutingDecision.objects.get(turn=turn, note=new)
    assert decision.action == "add" and f"disagrees with note {old.pk}" in decision.reason
    assert AuditLog.objects.filter(event_type=AuditEvent.LINK_CREATED, object_id=str(link.pk)).exists()
    # an additional deduction of the same deposit is another demand, not another value
    make_turn(deposit_conversation, ADDED, "", day=4)
    assert NoteLink.objects.filter(link_type=LinkType.CONTRADICTS).count() == 1


def test_search_flags_both_and_puts_the_newer_first_for_those_who_may_see_them(world, deposit_conversation,
                                                                               make_turn):
    make_turn(deposit_conversation, FIRST, "", day=1)
    make_turn(deposit_conversation, CHANGED, REPLY, day=3)
    old, new = _deduction_notes()
    result = search_memory(world.alice, "房东要扣多少押金？", k=10, matter_id=world.matter_deposit.pk)
    notes = [hit.note for hit in result.hits if hit.note is not None]
    assert old in notes and new in notes
    assert notes.index(new) < notes.index(old)
    flagged = {hit.note.pk: hit.contradictions for hit in result.hits if hit.note is not None}
    assert [(c.other, c.newer) for c in flagged[new.pk]] == [(old, True)]
    assert [(c.other, c.newer) for c in flagged[old.pk]] == [(new, False)]
    assert [hit.rank for hit in result.hits] == list(range(1, len(result.hits) + 1))
    # bob (same firm, walled off) and charlie (another firm) never see either note or the flag
    for outsider in (world.bob, world.charlie):
        assert contradictions_for(outsider, [old.pk, new.pk]) == {}
        hits = search_memory(outsider, "房东要扣多少押金？", k=10).hits
        assert not {hit.note.pk for hit in hits if hit.note is not None} & {old.pk, new.pk}


def test_asked_for_the_first_version_the_older_of_the_pair_comes_first(world, deposit_conversation, make_turn):
    make_turn(deposit_conversation, FIRST, "", day=1)
    make_turn(deposit_conversation, CHANGED, REPLY, day=3)
    old, new = _deduction_notes()
    result = search_memory(world.alice, "房东最早说要扣多少押金？", k=10, matter_id=world.matter_deposit.pk)
    assert result.plan.first_version
    notes = [hit.note for hit in result.hits if hit.note is not None]
    assert notes.index(old) < notes.index(new)
    assert [hit.rank for hit in result.hits] == list(range(1, len(result.hits) + 1))


def test_a_correction_settles_the_contradiction_and_is_audited(world, deposit_conversation, make_turn):
    make_turn(deposit_conversation, FIRST, "", day=1)
    make_turn(deposit_conversation, CHANGED, REPLY, day=3)
    old, new = _deduction_notes()
    link = NoteLink.objects.get(link_type=LinkType.CONTRADICTS)
    correct_note(old, {"content": "房东起初说墙面有污渍，要扣2000元押金，后来改口为3000元。"}, actor=world.alice,
                 reason="核实后更正")
    assert not NoteLink.objects.filter(link_type=LinkType.CONTRADICTS).exists()
    assert contradictions_for(world.alice, [old.pk, new.pk]) == {}
    entry = AuditLog.objects.get(event_type=AuditEvent.LINK_DELETED, object_id=str(link.pk))
    assert entry.actor == world.alice and entry.before["link_type"] == "contradicts"
    assert entry.extra["corrected_note"] == str(old.pk)


def test_forgetting_one_side_closes_the_contradiction(world, deposit_conversation, make_turn):
    make_turn(deposit_conversation, FIRST, "", day=1)
    make_turn(deposit_conversation, CHANGED, REPLY, day=3)
    old, new = _deduction_notes()
    assert set(contradictions_for(world.alice, [old.pk, new.pk])) == {old.pk, new.pk}
    forget_note(old, user=world.alice, reason="房东的第一次说法不再重要")
    assert contradictions_for(world.alice, [old.pk, new.pk]) == {}
    assert NoteLink.objects.filter(link_type=LinkType.CONTRADICTS).exists()  # kept as history


@translation.override("en")  # asserts the command's English output
def test_notes_written_before_the_rule_are_linked_by_the_command_once(world):
    old = world.note("房东说墙面有污渍，要扣2000元押金。", matter=world.matter_deposit, owner=world.alice, said_at=at(1))
    new = world.note("房东今天改口了，房东说墙面有污渍，要扣3000元押金。", matter=world.matter_deposit, owner=world.alice,
                     said_at=at(3))
    world.note("押金是7000元。", matter=world.matter_deposit, owner=world.alice, said_at=at(2))
    out = StringIO()
    call_command("link_contradictions", stdout=out)
    assert out.getvalue().strip() == "1 contradiction(s) linked"
    link = NoteLink.objects.get(link_type=LinkType.CONTRADICTS)
    assert (link.source, link.target) == (new, old)
    entry = AuditLog.objects.get(event_type=AuditEvent.LINK_CREATED, object_id=str(link.pk))
    assert entry.actor_label == "system:link_contradictions"
    out = StringIO()
    call_command("link_contradictions", "--firm", world.firm_a.slug, stdout=out)
    assert out.getvalue().strip() == "0 contradiction(s) linked"
