"""Numbered sources over the real websocket, with the fake OpenAI-compatible server scripted to
cite well, cite badly (numbers not in the list, items that do not support the sentence, invented
statutes, markers split across stream chunks, a stream cut inside a marker) and to cite from
behind a wall: the answer is kept, only this answer's items are ever linked, every check is
saved with the reply and written to the audit log."""
from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async

from django.utils import translation

from memory.audit_display import changes
from memory.models import AuditEvent, AuditLog, Message
from remember.extract import extractable_reply
from tests.chat.test_consumer import connected, frames_until
from tests.fake_llm.replies import Reply, stream_break_reply

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

DEPOSIT_NOTE = "押金3000元，房东以墙面污损为由拒绝退还。"


async def ask(user, question: str, *, matter_id: int | None = None) -> list[dict]:
    communicator, _ = await connected(user)
    frame = {"type": "ask", "question": question}
    if matter_id is not None:
        frame["matter_id"] = matter_id
    await communicator.send_json_to(frame)
    frames = await frames_until(communicator, "done")
    await communicator.disconnect()
    return frames


@sync_to_async
def saved_reply(message_id: int) -> Message:
    return Message.objects.get(pk=message_id)


@sync_to_async
def audit_rows(entry: AuditLog) -> list[tuple[str, str]]:
    with translation.override("zh-hans"):
        return [(row.label, row.after) for row in changes(entry)]


@sync_to_async
def audit_of(message_id: int) -> list[AuditLog]:
    return list(AuditLog.objects.filter(event_type=AuditEvent.ANSWER_CHECKED, object_id=str(message_id)))


async def test_markers_are_read_across_chunks_checked_and_saved_with_the_reply(world, llm_online):
    note = await sync_to_async(world.note)(DEPOSIT_NOTE, matter=world.matter_deposit)
    tokens = ["押金为3000元", "[", "1", "]。另外租金每月8000元[", "7]。依据《劳动法》第九十九条，",
              "房东须双倍返还押金【", "1】。"]
    llm_online.script(Reply(content="".join(tokens), tokens=tokens))
    frames = await ask(world.alice, "押金被扣了怎么办？", matter_id=world.matter_deposit.pk)

    recalled = frames[1]["notes"]
    assert recalled[0]["id"] == str(note.pk) and recalled[0]["number"] == 1
    assert recalled[0]["weak"] is False  # it bears on the question: the answer's basis
    assert recalled[0]["source_url"] == recalled[0]["provenance_url"]
    # the model was given the numbered item and asked to cite it
    sent = llm_online.chat_requests()[-1].messages
    assert "句末标注所依据条目的编号" in sent[0]["content"]
    assert re.search(r"\n- \[1\] 【M-\d+ 租房押金返还纠纷】 \[事实\] " + DEPOSIT_NOTE, sent[1]["content"])
    # while streaming, the page is never sent a marker to a number that is not in the list
    streamed = "".join(f["text"] for f in frames if f["type"] == "token")
    assert "[1]" in streamed and "[7]" not in streamed and "7]" not in streamed
    done = frames[-1]
    assert done["status"] == "complete"
    assert done["reply"].startswith("押金为3000元。[1]另外租金每月8000元。（引用已删除：所引记忆不支持此句）")
    assert "（未核实的法条引用：《劳动法》第九十九条）" in done["reply"]
    assert done["citations"]["cited"] == [{"number": 1, "id": str(note.pk), "kind": "note",
                                           "url": recalled[0]["source_url"]}]
    assert done["citations"]["unverified_citations"] == ["《劳动法》第九十九条"]

    reply = await saved_reply(done["message_id"])
    assert reply.content == done["reply"] and reply.citations == done["citations"]
    [entry] = await audit_of(done["message_id"])
    assert entry.private_to_id == world.alice.pk and entry.matter_id == world.matter_deposit.pk
    assert entry.after["cited"][0]["id"] == str(note.pk)
    assert [m["marks"] for m in entry.after["marked"]] == [["marker_removed"], ["marker_removed", "unverified_citation"]]
    rows = dict(await audit_rows(entry))  # the auditors' page reads it in words, never raw JSON
    assert rows["引用的来源"] == "[1] 笔记" and "《劳动法》第九十九条" in rows["未核实的法条引用"]
    assert "另外租金每月8000元。" in rows["被标注的句子"] and "{" not in "".join(rows.values())
    # what the write path reads of the reply: the invented statute never becomes a note
    words = extractable_reply(reply)
    assert "劳动法" not in words and "双倍" not in words


async def test_a_walled_user_gets_no_marker_to_anything_behind_the_wall(world, llm_online):
    walled = await sync_to_async(world.note)(DEPOSIT_NOTE, matter=world.matter_deposit)  # bob is not assigned
    await sync_to_async(world.note)("笔记本电脑购买两周后花屏。", matter=world.matter_laptop)
    llm_online.script("房东拒退押金3000元[1][2][3]。记忆中押金的记录见【4】。")
    frames = await ask(world.bob, "房东拒退押金，墙面污损，怎么办？")

    recalled = frames[1]["notes"]
    assert str(walled.pk) not in {item["id"] for item in recalled}
    assert recalled and all(item["weak"] for item in recalled)  # the laptop note: kept in the panel, marked weak
    done = frames[-1]
    # no marker survives: nothing bob may see supports the answer, and nothing walled is numbered
    assert done["citations"]["cited"] == [] and not re.search(r"\[\d+\]", done["reply"])
    assert all(item["source_url"] != f"/memory/{walled.pk}/#source-turn" for item in recalled)
    # said at the answer, before anything else
    assert done["reply"].startswith("【记忆中没有这方面的记录】以下内容并非来自本所记忆，仅供参考：\n房东拒退押金3000元。（引用已删除")
    assert done["citations"]["nothing_in_memory"] is True


async def test_an_answer_with_no_markers_is_marked_where_it_states_facts(world, llm_online):
    await sync_to_async(world.note)(DEPOSIT_NOTE, matter=world.matter_deposit)
    llm_online.script("房东应在2025年6月30日前退还押金8000元。建议先与房东协商。")
    done = (await ask(world.alice, "押金被扣了怎么办？", matter_id=world.matter_deposit.pk))[-1]
    assert done["reply"] == "房东应在2025年6月30日前退还押金8000元。（记忆中未找到依据）建议先与房东协商。"
    assert done["citations"]["cited"] == []


async def test_a_stream_cut_inside_a_marker_keeps_the_answer(world, llm_online):
    await sync_to_async(world.note)(DEPOSIT_NOTE, matter=world.matter_deposit)
    tokens = ["押金为3000元", "[", "1", "]。房东", "拒退[", "1"]
    llm_online.script(stream_break_reply("".join(tokens) + "]。", after=len(tokens), tokens=tokens + ["]。"]))
    done = (await ask(world.alice, "押金被扣了怎么办？", matter_id=world.matter_deposit.pk))[-1]
    assert done["status"] == "failed"
    assert done["reply"].startswith("押金为3000元。[1]房东拒退[1")
    reply = await saved_reply(done["message_id"])
    assert reply.content == done["reply"]


async def test_the_offline_answer_cites_its_items_by_construction(world, llm_offline):
    note = await sync_to_async(world.note)(DEPOSIT_NOTE, matter=world.matter_deposit)
    done = (await ask(world.alice, "押金被扣了怎么办？", matter_id=world.matter_deposit.pk))[-1]
    assert f"- {DEPOSIT_NOTE} [1]" in done["reply"]
    assert "记忆中有以下相关内容" in done["reply"]
    assert "通用建议（并非来自记忆）" in done["reply"]
    assert done["citations"]["cited"][0]["id"] == str(note.pk)
    assert done["citations"]["marked"] == []


async def test_an_invented_statute_is_absent_from_memory_after_extraction(world, llm_online):
    """The model invents a statute; the extraction model (scripted) files it as law: the turn job
    reads the reply as checked, the citation is not its speaker's, and no note holds it."""
    from chat.consumers import in_worker_thread
    from remember.turns import process_turn
    from memory.models import Note, TurnExtraction

    await sync_to_async(world.note)(DEPOSIT_NOTE, matter=world.matter_deposit)
    invented = "《劳动法》第九十九条规定房东须双倍返还押金"
    llm_online.script(f"押金为3000元[1]。依据{invented}。",
                      {"knowledge": [{"content": invented, "category": "法条", "confidence": 0.9},
                                     {"content": "房东以墙面污损为由扣下3000元押金", "category": "事实", "confidence": 0.9}]})
    done = (await ask(world.alice, "房东以墙面污损为由扣了3000元押金怎么办？", matter_id=world.matter_deposit.pk))[-1]
    assert "（未核实的法条引用：《劳动法》第九十九条）" in done["reply"]

    @in_worker_thread  # its own connection, closed after (the test database can be dropped)
    def extract() -> list[str]:
        turn = process_turn(TurnExtraction.objects.get(conversation_id=done["conversation_id"]).pk)
        assert turn.status == "done", turn.last_error
        return list(Note.objects.values_list("content", flat=True))

    notes = await extract()
    assert not any("劳动法" in content for content in notes)
    assert any("墙面污损" in content and "3000" in content for content in notes)  # the client's fact is kept
