"""``GET /chat/<id>/export.md``: a conversation as Markdown with each answer's numbered sources
(docs/citations.md, "Export"). alice gets her conversation with the answer's markers, the
sources they name (the lease page, the note) and links to them, and the export is in the audit
log; bob and charlie get a 404 and nothing is recorded; a source behind a wall alice has since
left is named as no longer visible, never quoted."""
from __future__ import annotations

import re

import pytest

from chat.turns import begin_turn, finish_turn, recall
from memory.models import AuditEvent, AuditLog, MatterAssignment
from memory.services.tenancy import unassign_user
from tests.clients import logged_in
from tests.documents.conftest import add_document
from tests.documents.files import text_pdf
from tests.documents.test_extraction import LEASE

pytestmark = pytest.mark.django_db

QUESTION = "What is the monthly rent and when is it payable?"


def answered(world, matter):
    """alice asks about the rent; the (LLM) answer cites the lease page and states one sum no
    source holds. Returns the conversation, the saved reply and the passage's number."""
    start = begin_turn(world.alice, question=QUESTION, conversation_id=None, matter_id=matter.pk if matter else None)
    memory = recall(world.alice, start)
    passage = next(item for item in memory.recalled if item["kind"] == "document" and "RMB 8000" in item["text"])
    reply = f"The monthly rent is RMB 8000 [{passage['number']}]. The deposit is RMB 99999."
    saved = finish_turn(start, memory, reply=reply, status="complete", engine="llm:test", timings={})
    return start.conversation, saved, passage


def export(user, conversation, language="zh-hans"):
    return logged_in(user).get(f"/chat/{conversation.pk}/export.md", HTTP_ACCEPT_LANGUAGE=language)


def test_alice_exports_her_conversation_with_the_answer_s_sources(world):
    lease = add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)
    conversation, reply, passage = answered(world, world.matter_deposit)
    response = export(world.alice, conversation)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert response["Content-Disposition"] == f'attachment; filename="conversation-{conversation.pk}.md"'
    text = response.content.decode()
    assert text.startswith("# ")
    assert f"> {QUESTION}" in text
    n = passage["number"]
    assert f"> The monthly rent is RMB 8000.[{n}] The deposit is RMB 99999.（记忆中未找到依据）" in text  # as saved
    assert "来源：" in text
    line = next(line for line in text.splitlines() if line.startswith(f"- [{n}] "))
    assert line.startswith(f"- [{n}] 《房屋租赁合同》第 2 页: ") and "RMB 8000" in line
    assert re.search(rf"<http://testserver/documents/{lease.pk}/\?page=2&start=\d+&end=\d+>$", line)
    numbered = [int(m) for m in re.findall(r"^- \[(\d+)\] ", text, flags=re.MULTILINE)]
    assert numbered == list(range(1, len(reply.recalled) + 1))  # every source of the answer, in order
    entry = AuditLog.objects.get(event_type=AuditEvent.CONVERSATION_EXPORTED)
    assert (entry.object_type, entry.object_id, entry.matter_id) == ("conversation", str(conversation.pk),
                                                                     world.matter_deposit.pk)
    assert entry.actor == world.alice


def test_the_export_speaks_the_reader_s_language(world):
    add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)
    conversation, _reply, _passage = answered(world, world.matter_deposit)
    text = export(world.alice, conversation, language="en").content.decode()
    assert "Sources:" in text and "来源：" not in text  # the export's own words; the answer stays as it was said
    assert "- Each [n] in an answer names the source listed under it with that number." in text


@pytest.mark.parametrize("user_name", ["bob", "charlie"])
def test_nobody_else_exports_alice_s_conversation(world, user_name):
    add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)
    conversation, _reply, _passage = answered(world, world.matter_deposit)
    response = export(getattr(world, user_name), conversation)
    assert response.status_code == 404
    assert b"RMB 8000" not in response.content
    assert not AuditLog.objects.filter(event_type=AuditEvent.CONVERSATION_EXPORTED).exists()


def test_a_source_behind_a_wall_alice_left_is_named_not_quoted(world):
    add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)
    conversation, _reply, passage = answered(world, None)  # no matter: every matter she may see
    unassign_user(MatterAssignment.objects.get(user=world.alice, matter=world.matter_deposit), actor="test")
    text = export(world.alice, conversation).content.decode()
    n = passage["number"]
    assert f"- [{n}] （您已无权查看此来源）" in text
    assert "《房屋租赁合同》第 2 页:" not in text and "/documents/" not in text


@pytest.mark.parametrize("path, status", [
    ("/chat/999999999999999999/export.md", 404),  # no id PostgreSQL can hold
    ("/chat/0/export.md", 404),
])
def test_bad_addresses_are_404(world, path, status):
    assert logged_in(world.alice).get(path).status_code == status


def test_only_get_and_only_logged_in(world):
    add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)
    conversation, _reply, _passage = answered(world, world.matter_deposit)
    assert logged_in(world.alice).post(f"/chat/{conversation.pk}/export.md").status_code == 405
    from django.test import Client

    anonymous = Client().get(f"/chat/{conversation.pk}/export.md")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]


def test_the_conversation_page_links_its_export(world):
    add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)
    conversation, _reply, _passage = answered(world, world.matter_deposit)
    page = logged_in(world.alice).get(f"/chat/{conversation.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert f'href="/chat/{conversation.pk}/export.md"' in page and "导出为 Markdown（附来源）" in page
    blank = logged_in(world.alice).get("/chat/").content.decode()
    assert re.search(r'id="export-conversation"[^>]*\shidden', blank.replace("\n", " "))
