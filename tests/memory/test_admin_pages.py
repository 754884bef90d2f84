"""The admin as an auditor reads it: LegalMem branding, translated labels in both languages,
the note history page (evolution timeline and audit entries), audit search by event, object
type and note content, one actor row and local times."""
from __future__ import annotations

from datetime import timezone as dt_timezone

import pytest
from django.test import Client
from django.utils import timezone

from memory.models import AuditEvent, AuditLog
from memory.services.notes import correct_note, forget_note

pytestmark = pytest.mark.django_db


def admin_client(user, language: str = "zh-hans") -> Client:
    client = Client(headers={"accept-language": language})
    client.force_login(user)
    return client


def test_admin_is_branded_and_translated_in_both_languages(world, memory_notes):
    zh = admin_client(world.alice).get("/admin/memory/note/").content.decode()
    assert "LegalMem" in zh
    assert "Django 管理" not in zh
    assert "Django administration" not in zh
    assert "以 状态" in zh
    assert "以 status" not in zh  # filter titles use the translated field name
    assert "笔记" in zh
    assert "记忆层" in zh
    en = admin_client(world.alice, "en").get("/admin/memory/note/").content.decode()
    assert "LegalMem audit" in en
    assert "By status" in en
    assert "memory layer" in en.lower()
    index = admin_client(world.alice).get("/admin/").content.decode()
    assert "轮次抽取" in index
    assert "Turn extractions" not in index


def test_note_history_page_shows_the_timeline_and_the_audit_entries(world, memory_notes):
    note = memory_notes["laptop"]
    correct_note(note, {"content": "笔记本电脑在购买后第十天出现花屏。"}, actor=world.alice, reason="日期有误")
    url = f"/admin/memory/note/{note.pk}/history/"
    page = admin_client(world.alice).get(url).content.decode()
    assert "没有修改历史" not in page
    assert "doesn’t have a change history" not in page
    assert "第十天" in page
    assert "约两周" in page
    assert "日期有误" in page  # before → after, why
    assert page.count('class="audit-entry') == AuditLog.objects.filter(object_id=str(note.pk)).count() == 2
    change = admin_client(world.alice).get(f"/admin/memory/note/{note.pk}/change/").content.decode()
    assert '&quot;changes&quot;' not in change
    assert 'class="timeline"' in change  # no raw JSON
    assert admin_client(world.charlie).get(url).status_code == 404
    assert admin_client(world.alice).get(f"/admin/memory/note/{memory_notes['secret'].pk}/history/").status_code == 404


def test_audit_search_by_object_type_event_and_note_content(world, memory_notes):
    forget_note(memory_notes["deposit"], user=world.alice, reason="撤回")
    client = admin_client(world.alice)
    visible = AuditLog.objects.visible_to(world.alice)
    by_type = client.get("/admin/memory/auditlog/", {"q": "note"}).context["cl"]
    assert by_type.result_count == visible.filter(object_type="note").count() > 0
    by_event = client.get("/admin/memory/auditlog/", {"q": "遗忘"}).context["cl"]
    assert [e.event_type for e in by_event.result_list] == [AuditEvent.NOTE_FORGOTTEN]
    by_content = client.get("/admin/memory/auditlog/", {"q": "押金五千"}).context["cl"]
    assert {e.object_id for e in by_content.result_list} == {str(memory_notes["deposit"].pk)}
    walled = client.get("/admin/memory/auditlog/", {"q": "并购目标"}).context["cl"]
    assert walled.result_count == 0  # the secret matter's entries stay behind the wall
    outsider = admin_client(world.charlie).get("/admin/memory/auditlog/", {"q": "押金"}).context["cl"]
    assert outsider.result_count == 0


def test_audit_entry_has_one_actor_row_and_local_times(world, memory_notes):
    entry = AuditLog.objects.filter(object_id=str(memory_notes["laptop"].pk)).latest("id")
    page = admin_client(world.alice, "en").get(f"/admin/memory/auditlog/{entry.pk}/change/").content.decode()
    assert page.count('<label>actor:</label>') + page.count('<label>Actor:</label>') == 1
    local = timezone.localtime(entry.created_at)
    assert local.utcoffset().total_seconds() == 8 * 3600  # the firm's zone, Asia/Shanghai
    assert f"{local:%Y-%m-%d %H:%M:%S}" in page  # the title, like the field, in local time
    assert f"{entry.created_at.astimezone(dt_timezone.utc):%Y-%m-%d %H:%M:%S}" not in page
