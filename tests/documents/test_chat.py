"""Document passages in the chat: the recalled panel and the offline answer cite
《房屋租赁合同》第 2 页 and link to the viewer; a reloaded conversation keeps them only for
users who still see the document; erasure scrubs them from saved replies."""
from __future__ import annotations

from chat.answering import compose_offline_answer
from chat.selectors import recalled_as_seen_by
from chat.turns import begin_turn, recall
from memory.models import Message
from records.erasure import erase, matter_unit
from tests.documents.conftest import add_document
from tests.documents.files import text_pdf
from tests.documents.test_extraction import LEASE


def _ask(user, matter, question):
    start = begin_turn(user, question=question, conversation_id=None, matter_id=matter.pk if matter else None)
    return start, recall(user, start)


def test_the_recalled_panel_and_the_offline_answer_cite_the_page(world):
    add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE))
    _, memory = _ask(world.alice, world.matter_deposit, "What is the monthly rent and when is it payable?")

    passages = [r for r in memory.recalled if r["kind"] == "document"]
    assert passages and passages[0]["citation"] == "《房屋租赁合同》第 2 页"
    assert passages[0]["url"].startswith(f"/documents/{passages[0]['document_id']}/?page=2&start=")
    assert any("《房屋租赁合同》第 2 页" in m["content"] for m in memory.llm_messages if m["role"] == "system")
    answer = compose_offline_answer("rent?", memory.recalled, current_matter_id=world.matter_deposit.pk)
    assert "《房屋租赁合同》第 2 页：" in answer and "RMB 8000" in answer


def test_another_matter_recalls_no_passage_of_the_lease(world):
    add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE))
    _, memory = _ask(world.bob, world.matter_laptop, "What is the monthly rent and when is it payable?")

    assert [r for r in memory.recalled if r["kind"] == "document"] == []


def test_saved_passages_follow_the_wall_and_go_with_an_erasure(world, django_capture_on_commit_callbacks):
    add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE))
    start, memory = _ask(world.alice, None, "monthly rent payable")  # no matter: every visible one's documents
    reply = Message.objects.create(conversation=start.conversation, firm=world.firm_a, role="assistant",
                                   content="RMB 8000", said_at=start.user_message.said_at, recalled=memory.recalled)

    shown = recalled_as_seen_by(world.alice, [reply])[reply.pk]
    assert any(entry["kind"] == "document" for entry in shown)
    assert not any(entry["kind"] == "document" for entry in recalled_as_seen_by(world.bob, [reply])[reply.pk])

    with django_capture_on_commit_callbacks(execute=True):
        erase(matter_unit(world.matter_deposit), actor=world.alice, reason="client asked")
    reply.refresh_from_db()  # the conversation has no matter: it stays, without the passages
    assert not [entry for entry in reply.recalled if entry.get("kind") == "document"]


def test_a_note_made_from_a_document_links_to_its_page(world):
    from tests.documents.files import docx_bytes

    add_document(world.matter_deposit, "房屋租赁合同.docx", docx_bytes("房屋租赁合同", ["租客张三的月租金为8000元。"]),
                 actor=world.alice)
    _, memory = _ask(world.alice, world.matter_deposit, "张三的月租金是多少？")

    notes = [r for r in memory.recalled if r["kind"] == "note" and r.get("document_url")]
    assert notes and notes[0]["document_citation"] == "《房屋租赁合同》第 1 页"
    assert notes[0]["document_url"].startswith("/documents/") and "&start=" in notes[0]["document_url"]


def test_a_passage_is_numbered_and_its_marker_leads_to_the_viewer_at_the_page(world):
    from chat.citations import check_answer

    add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE))
    _, memory = _ask(world.alice, world.matter_deposit, "What is the monthly rent and when is it payable?")
    rent = next(r for r in memory.recalled if r["kind"] == "document" and "RMB 8000" in r["text"])
    assert rent["number"] == memory.recalled.index(rent) + 1
    assert rent["source_url"] == rent["url"] and rent["source_url"].startswith(f"/documents/{rent['document_id']}/?page=2")
    documents = next(m["content"] for m in memory.llm_messages if "《房屋租赁合同》第 2 页" in m["content"])
    assert f"[{rent['number']}] 【《房屋租赁合同》第 2 页】" in documents
    checked = check_answer(f"The monthly rent is RMB 8000 [{rent['number']}].", memory.recalled)
    assert checked.cited == [rent["number"]] and checked.marked == []
    assert checked.as_dict(memory.recalled)["cited"][0]["url"] == rent["source_url"]
