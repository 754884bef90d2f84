"""The "my memory" page and its services: list, filter, search, see the source turn and
history, correct and forget — through the one visibility rule, audited, with alice (firm admin),
bob (lawyer walled off from the deposit matter) and charlie (another firm)."""
from __future__ import annotations

import pytest

from memory.models import AuditEvent, AuditLog, MemoryScope, Message, Note
from remember.message_index import index_messages
from recall import search_memory
from memory.services.notes import (
    NoteNotChangeable,
    NoteValidationError,
    correct_own_note,
    forget_note,
    restore_forgotten_note,
    supersede_note,
)
from tests.clients import logged_in

pytestmark = pytest.mark.django_db


def listed(user, **params) -> str:
    response = logged_in(user).get("/memory/", params)
    assert response.status_code == 200, response.content.decode()[:500]
    return response.content.decode()


def test_each_user_lists_exactly_what_the_visibility_rule_gives(world, memory_notes):
    n = memory_notes
    for user, seen in (
        (world.alice, {"laptop", "deposit", "law", "alice_profile"}),
        (world.bob, {"laptop", "law", "bob_profile"}),
        (world.charlie, {"beta"}),
    ):
        page = listed(user)
        for key, note in n.items():
            assert (str(note.pk) in page) == (key in seen), (user.username, key)
        assert set(Note.objects.visible_to(user).values_list("pk", flat=True)) == {n[k].pk for k in seen}


def test_filters_by_layer_matter_category_and_status(world, memory_notes):
    n = memory_notes
    page = listed(world.alice, scope=MemoryScope.GENERAL_LAW)
    assert str(n["law"].pk) in page
    assert str(n["laptop"].pk) not in page
    page = listed(world.alice, matter=world.matter_deposit.pk)
    assert str(n["deposit"].pk) in page
    assert str(n["laptop"].pk) not in page
    page = listed(world.alice, category="preference")
    assert str(n["alice_profile"].pk) in page
    assert str(n["law"].pk) not in page
    newer = world.note("笔记本电脑在购买后第十天出现花屏。", matter=world.matter_laptop)
    supersede_note(n["laptop"], newer, actor="system:test", reason="better date")
    current, superseded = listed(world.alice), listed(world.alice, status="superseded")
    assert str(newer.pk) in current
    assert str(n["laptop"].pk) not in current
    assert str(n["laptop"].pk) in superseded
    assert str(newer.pk) not in superseded
    # Superseded and forgotten notes are never recalled: they are found by every segmented word.
    assert str(n["laptop"].pk) in listed(world.alice, status="superseded", q="电脑花屏")
    assert str(n["laptop"].pk) not in listed(world.alice, status="superseded", q="电脑 押金")


def test_a_matter_outside_the_wall_is_a_clear_400_not_a_leak(world, memory_notes):
    response = logged_in(world.bob).get("/memory/", {"matter": world.matter_deposit.pk})
    assert response.status_code == 400
    assert "押金" not in response.content.decode()
    response = logged_in(world.charlie).get("/memory/", {"matter": world.matter_laptop.pk, "status": "nonsense"})
    assert response.status_code == 400
    assert "花屏" not in response.content.decode()


def test_search_ranks_with_the_assistants_recall_and_stays_behind_the_wall(world, memory_notes):
    n = memory_notes
    page = listed(world.alice, q="押金退还")
    assert str(n["deposit"].pk) in page
    page = listed(world.bob, q="押金退还")
    assert str(n["deposit"].pk) not in page
    assert str(n["secret"].pk) not in page
    page = listed(world.charlie, q="花屏")
    assert str(n["laptop"].pk) not in page
    assert "花屏" not in page.split("<table")[1]


def test_note_page_shows_source_turn_history_and_validity_only_to_those_who_may_see(world, memory_notes):
    n = memory_notes
    url = f"/memory/{n['laptop'].pk}/"
    page = logged_in(world.alice).get(url).content.decode()
    assert "我的笔记本买了两周就大面积花屏了。" in page  # alice's own turn
    assert "建议先做官方检测" in page
    page = logged_in(world.bob).get(url).content.decode()
    assert "我的笔记本买了两周" not in page  # alice's conversation is hers
    assert 'data-hidden="2"' in page
    for user, key in ((world.bob, "deposit"), (world.bob, "alice_profile"), (world.charlie, "laptop"),
                      (world.alice, "secret"), (world.alice, "beta")):
        response = logged_in(user).get(f"/memory/{n[key].pk}/")
        assert response.status_code == 404, (user.username, key)
        assert n[key].content not in response.content.decode()


def test_forgetting_retires_the_note_from_recall_and_audits_it(world, memory_notes):
    note = memory_notes["deposit"]
    assert note.pk in [h.pk for h in search_memory(world.alice, "押金退还", k=10).notes]
    forgotten = forget_note(note, user=world.alice, reason="客户已撤回此说法")
    assert forgotten.status == Note.Status.FORGOTTEN
    assert forgotten.valid_to is not None
    assert forgotten.evolution_history[-1]["event"] == "forgotten"
    assert note.pk not in [h.pk for h in search_memory(world.alice, "押金退还", k=50).notes]
    entry = AuditLog.objects.get(object_id=str(note.pk), event_type=AuditEvent.NOTE_FORGOTTEN)
    assert entry.actor == world.alice
    assert entry.extra["reason"] == "客户已撤回此说法"
    assert entry.before["status"] == "active"
    assert entry.after["status"] == "forgotten"
    assert Note.objects.filter(pk=note.pk).exists()  # the row stays for the audit trail
    page = listed(world.alice, status="forgotten")
    assert str(note.pk) in page
    assert str(note.pk) not in listed(world.alice)
    with pytest.raises(NoteValidationError):
        forget_note(note, user=world.alice)


def test_a_forgotten_note_is_not_recalled_from_its_source_turn_either(world, memory_notes):
    laptop = memory_notes["laptop"]
    question = laptop.source_message_ids[0]
    index_messages()
    forget_note(laptop, user=world.alice, reason="不再需要")
    hits = search_memory(world.alice, "笔记本花屏", k=10, matter_id=world.matter_laptop.pk).hits
    assert laptop.pk not in {hit.note.pk for hit in hits if hit.note is not None}
    assert question not in {i for hit in hits for i in hit.source_message_ids}
    assert Message.objects.filter(pk=question).exists()  # the conversation still shows it
    restore_forgotten_note(Note.objects.get(pk=laptop.pk), actor=world.alice)
    hits = search_memory(world.alice, "笔记本花屏", k=10, matter_id=world.matter_laptop.pk).hits
    assert question in {i for hit in hits for i in hit.source_message_ids}
    outsider = search_memory(world.charlie, "笔记本花屏", k=10).hits  # another firm: never alice's turn
    assert question not in {i for hit in outsider for i in hit.source_message_ids}


def test_who_may_forget_what(world, memory_notes):
    n = memory_notes
    with pytest.raises(NoteNotChangeable):  # firm-wide layer: firm admins only
        forget_note(n["law"], user=world.bob)
    with pytest.raises(NoteNotChangeable):  # behind the wall
        forget_note(n["deposit"], user=world.bob)
    with pytest.raises(NoteNotChangeable):  # another firm
        forget_note(n["laptop"], user=world.charlie)
    with pytest.raises(NoteNotChangeable):  # someone else's profile, even for a firm admin
        forget_note(n["bob_profile"], user=world.alice)
    assert Note.objects.filter(status=Note.Status.FORGOTTEN).count() == 0
    assert not AuditLog.objects.filter(event_type=AuditEvent.NOTE_FORGOTTEN).exists()
    forget_note(n["laptop"], user=world.bob)  # a note of his matter
    forget_note(n["bob_profile"], user=world.bob)  # his own profile
    forget_note(n["law"], user=world.alice)  # a firm admin, a firm-wide note
    assert Note.objects.filter(status=Note.Status.FORGOTTEN).count() == 3


def test_forget_and_correct_through_the_page(world, memory_notes):
    n = memory_notes
    bob = logged_in(world.bob)
    assert bob.post(f"/memory/{n['law'].pk}/forget/").status_code == 403
    assert bob.post(f"/memory/{n['deposit'].pk}/forget/").status_code == 404
    assert logged_in(world.charlie).post(f"/memory/{n['laptop'].pk}/correct/",
                                         {"content": "x", "category": "fact"}).status_code == 404
    assert 'id="not-changeable"' in bob.get(f"/memory/{n['law'].pk}/").content.decode()

    response = bob.post(f"/memory/{n['laptop'].pk}/correct/",
                        {"content": "笔记本电脑在购买后第十天出现花屏。", "category": "evidence", "reason": "日期有误"})
    assert response.status_code == 302
    note = Note.objects.get(pk=n["laptop"].pk)
    assert note.content == "笔记本电脑在购买后第十天出现花屏。"
    assert note.category == "evidence"
    entry = AuditLog.objects.filter(object_id=str(note.pk), event_type=AuditEvent.NOTE_UPDATED).latest("id")
    assert entry.actor == world.bob
    assert entry.extra["reason"] == "日期有误"
    page = bob.get(f"/memory/{note.pk}/").content.decode()
    assert "第十天" in page
    assert "日期有误" in page  # the timeline says what changed and why

    response = bob.post(f"/memory/{note.pk}/correct/", {"content": "   ", "category": "fact"})
    assert response.status_code == 400
    assert Note.objects.get(pk=note.pk).content == "笔记本电脑在购买后第十天出现花屏。"

    assert bob.post(f"/memory/{note.pk}/forget/", {"reason": "不再相关"}).status_code == 302
    assert Note.objects.get(pk=note.pk).status == Note.Status.FORGOTTEN
    assert bob.post(f"/memory/{note.pk}/correct/", {"content": "改", "category": "fact"}).status_code == 400
    assert bob.get("/memory/", {"q": "第十天 花屏"}).content.decode().count(str(note.pk)) == 0


def test_a_superseded_note_cannot_be_corrected(world, memory_notes):
    n = memory_notes
    newer = world.note("押金为六千元。", matter=world.matter_deposit)
    supersede_note(n["deposit"], newer, actor="system:test", reason="new amount")
    with pytest.raises(NoteValidationError):
        correct_own_note(Note.objects.get(pk=n["deposit"].pk), {"content": "改"}, user=world.alice)


def test_an_auditor_restores_a_forgotten_note_to_what_it_was(world, memory_notes):
    n = memory_notes
    forget_note(n["deposit"], user=world.alice, reason="误操作")
    newer = world.note("笔记本电脑在购买后第十天出现花屏。", matter=world.matter_laptop)
    supersede_note(n["laptop"], newer, actor="system:test", reason="better date")
    old = Note.objects.get(pk=n["laptop"].pk)
    forget_note(old, user=world.bob)
    response = logged_in(world.alice).post("/admin/memory/note/", {
        "action": "restore_forgotten", "_selected_action": [str(n["deposit"].pk), str(old.pk)],
    })
    assert response.status_code == 302
    deposit, laptop = Note.objects.get(pk=n["deposit"].pk), Note.objects.get(pk=old.pk)
    assert deposit.status == Note.Status.ACTIVE
    assert deposit.valid_to is None
    assert laptop.status == Note.Status.SUPERSEDED
    assert laptop.valid_to == old.valid_to  # its window again
    assert deposit.pk in [h.pk for h in search_memory(world.alice, "押金退还", k=10).notes]
    entry = AuditLog.objects.filter(object_id=str(deposit.pk)).latest("id")
    assert entry.event_type == AuditEvent.NOTE_UPDATED
    assert entry.actor == world.alice
    assert deposit.evolution_history[-1]["event"] == "restored"
