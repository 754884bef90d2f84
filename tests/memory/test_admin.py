"""Django admin for auditors: superusers see all; a firm admin sees their firm behind the wall;
anything else is a 404; edits and deletes are audited."""
from __future__ import annotations

import pytest

from memory.models import AuditEvent, AuditLog, Note
from tests.clients import logged_in
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def change_url(note: Note) -> str:
    return f"/admin/memory/note/{note.pk}/change/"


def test_firm_admin_lists_only_their_firm_behind_the_wall(world, memory_notes):
    page = logged_in(world.alice).get("/admin/memory/note/").content.decode()
    assert memory_notes["laptop"].content[:20] in page
    assert memory_notes["law"].content[:20] in page
    assert "并购" not in page  # matter_secret: alice administers the firm but is not assigned
    assert "bob 偏好" not in page  # another user's profile
    assert "Beta" not in page  # another firm: no rows, no filter choices


def test_other_firms_and_walled_notes_are_404_in_admin(world, memory_notes):
    alice, charlie = logged_in(world.alice), logged_in(world.charlie)
    assert alice.get(change_url(memory_notes["laptop"])).status_code == 200
    for key in ("beta", "secret", "bob_profile"):
        assert alice.get(change_url(memory_notes[key])).status_code == 404
    for key in ("laptop", "law"):
        response = charlie.get(change_url(memory_notes[key]))
        assert response.status_code == 404
        assert memory_notes[key].content not in response.content.decode()
    assert charlie.get(f"/admin/memory/note/{memory_notes['laptop'].pk}/delete/").status_code == 404
    assert charlie.get(f"/admin/memory/matter/{world.matter_laptop.pk}/change/").status_code == 404
    assert charlie.get(f"/admin/memory/firm/{world.firm_a.pk}/change/").status_code == 404


def test_audit_log_of_another_firm_is_invisible(world, memory_notes):
    page = logged_in(world.charlie).get("/admin/memory/auditlog/").content.decode()
    assert str(memory_notes["laptop"].pk) not in page
    assert str(memory_notes["beta"].pk) in page
    entry = AuditLog.objects.get(object_id=str(memory_notes["laptop"].pk))
    assert logged_in(world.charlie).get(f"/admin/memory/auditlog/{entry.pk}/change/").status_code == 404


def test_non_staff_lawyer_cannot_enter_admin(world, memory_notes):
    response = logged_in(world.bob).get("/admin/memory/note/")
    assert response.status_code == 302
    assert "/admin/login/" in response["Location"]


def test_staff_user_without_a_firm_admin_role_sees_nothing(world, memory_notes):
    staff_only = UserFactory(username="dave", is_staff=True)
    assert logged_in(staff_only).get("/admin/memory/note/").status_code == 403
    assert logged_in(staff_only).get(change_url(memory_notes["laptop"])).status_code in (403, 404)


def test_superuser_sees_every_firm(world, memory_notes):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    page = logged_in(root).get("/admin/memory/note/").content.decode()
    assert "Beta 客户" in page
    assert "并购" in page


def test_change_page_shows_provenance_read_only(world, memory_notes):
    page = logged_in(world.alice).get(change_url(memory_notes["laptop"])).content.decode()
    assert "Provenance" in page or "来源" in page or "provenance" in page.lower()
    assert 'name="source_id"' not in page  # provenance is not editable
    assert 'name="content"' in page


def test_an_edit_through_admin_is_audited(world, memory_notes):
    note = memory_notes["laptop"]
    alice = logged_in(world.alice)
    form = {
        "content": "笔记本电脑在购买后约十天出现大面积花屏。",
        "memory_scope": note.memory_scope,
        "category": note.category,
        "memory_type": note.memory_type,
        "keywords": "花屏,笔记本",
        "tags": "",
        "context": "",
        "importance": "0.7",
        "confidence": "0.9",
        "subject": "",
    }
    response = alice.post(change_url(note), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    note.refresh_from_db()
    assert note.content == form["content"]
    assert note.keywords == ["花屏", "笔记本"]
    entry = AuditLog.objects.filter(object_id=str(note.pk), event_type=AuditEvent.NOTE_UPDATED).get()
    assert entry.actor == world.alice
    assert entry.before["content"].startswith("笔记本电脑在购买后约两周")
    assert entry.after["content"] == form["content"]


def test_a_delete_through_admin_is_audited(world, memory_notes):
    note = memory_notes["law"]
    response = logged_in(world.alice).post(f"/admin/memory/note/{note.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Note.objects.filter(pk=note.pk).exists()
    entry = AuditLog.objects.get(object_id=str(note.pk), event_type=AuditEvent.NOTE_DELETED)
    assert entry.actor == world.alice
    assert entry.before["content"] == note.content


def test_nobody_can_change_or_delete_audit_entries_in_admin(world, memory_notes):
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    entry = AuditLog.objects.filter(firm=world.firm_a).first()
    client = logged_in(root)
    assert client.get(f"/admin/memory/auditlog/{entry.pk}/delete/").status_code == 403
    client.post(f"/admin/memory/auditlog/{entry.pk}/change/", {"actor_label": "mallory"})
    entry.refresh_from_db()
    assert entry.actor_label != "mallory"


def test_firm_admin_assigns_a_member_and_the_assignment_is_audited(world, memory_notes):
    alice = logged_in(world.alice)
    url = f"/admin/memory/matter/{world.matter_deposit.pk}/change/"
    page = alice.get(url).content.decode()
    assert "charlie" not in page  # users of other firms are not offered
    existing = list(world.matter_deposit.assignments.all())
    data = {
        "title": world.matter_deposit.title,
        "reference": world.matter_deposit.reference,
        "description": "",
        "status": "open",
        "assignments-TOTAL_FORMS": str(len(existing) + 1),
        "assignments-INITIAL_FORMS": str(len(existing)),
        "assignments-MIN_NUM_FORMS": "0",
        "assignments-MAX_NUM_FORMS": "1000",
    }
    for index, assignment in enumerate(existing):
        data[f"assignments-{index}-id"] = str(assignment.pk)
        data[f"assignments-{index}-matter"] = str(world.matter_deposit.pk)
        data[f"assignments-{index}-user"] = str(assignment.user_id)
    data[f"assignments-{len(existing)}-matter"] = str(world.matter_deposit.pk)
    data[f"assignments-{len(existing)}-user"] = str(world.bob.pk)
    response = alice.post(url, data)
    assert response.status_code == 302, response.content.decode()[:3000]
    assert world.matter_deposit.is_assigned(world.bob)
    entry = AuditLog.objects.filter(event_type=AuditEvent.MATTER_ASSIGNED).latest("id")
    assert entry.actor == world.alice
    assert entry.after == {"user": "bob"}


def test_change_page_panels_show_links_and_audit_trail_but_never_across_the_wall(world, memory_notes):
    from memory.services.notes import link_notes

    link_notes(memory_notes["laptop"], memory_notes["law"], link_type="supports", weight=0.6, actor="system:test", reason="法条支持")
    link_notes(memory_notes["laptop"], memory_notes["secret"], link_type="semantic", weight=0.9, actor="system:test")
    page = logged_in(world.alice).get(change_url(memory_notes["laptop"])).content.decode()
    assert "Audit trail" in page or "审计" in page
    assert memory_notes["law"].content[:20] in page
    assert "法条支持" in page
    assert "并购" not in page  # linked, but behind a wall alice is not assigned to
    root = UserFactory(username="root", is_staff=True, is_superuser=True)
    assert "并购" in logged_in(root).get(change_url(memory_notes["laptop"])).content.decode()
