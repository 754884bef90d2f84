"""The chat websocket against the fake OpenAI-compatible server (real HTTP, SSE streaming):
ordered tokens equal the saved reply, cancel and disconnect stop the LLM, errors are frames,
nothing the user said is lost, extraction is enqueued once per turn."""
from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django_tasks_db.models import DBTaskResult

from memory.models import Conversation, MemoryScope, Message, TurnExtraction
from tests.chat.conftest import open_socket
from tests.fake_llm.replies import error_reply, stream_error_reply, stream_stall_reply, text_reply
from chat import turns as chat_turns

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ANSWER = "结论：可以要求退货。依据：产品质量问题。证据：发票、录音。"


async def connected(user):
    communicator = await open_socket(user)
    ok, _ = await communicator.connect()
    assert ok
    ready = await communicator.receive_json_from(timeout=5)
    assert ready["type"] == "ready"
    return communicator, ready


async def frames_until(communicator, kind: str, timeout: float = 10) -> list[dict]:
    frames = []
    while True:
        frame = await communicator.receive_json_from(timeout=timeout)
        frames.append(frame)
        if frame["type"] == kind:
            return frames


@sync_to_async
def messages_of(conversation_id: int) -> list[tuple[str, str, str]]:
    return list(Message.objects.filter(conversation_id=conversation_id).order_by("id").values_list("role", "content", "status"))


async def test_tokens_stream_in_order_and_equal_the_saved_reply(world, llm_online):
    world_note = await sync_to_async(world.note)("笔记本电脑在购买后约两周出现大面积花屏。", matter=world.matter_laptop)
    llm_online.script(text_reply(ANSWER, token_delay=0.005))
    communicator, ready = await connected(world.bob)
    assert ready == {"type": "ready", "user": "bob", "firms": ["alpha"], "engine": f"llm:{llm_online.model}"}
    await communicator.send_json_to({"type": "ask", "question": "电脑花屏了怎么办？", "matter_id": world.matter_laptop.pk})
    frames = await frames_until(communicator, "done")
    kinds = [f["type"] for f in frames]
    assert kinds[0] == "conversation"
    assert kinds[1] == "recalled"
    assert kinds[-1] == "done"
    tokens = [f["text"] for f in frames if f["type"] == "token"]
    assert len(tokens) > 5
    assert "".join(tokens) == ANSWER
    recalled = frames[1]["notes"]
    assert [n["id"] for n in recalled] == [str(world_note.pk)]
    assert recalled[0]["layer"] == "case"
    assert set(recalled[0]["score"]) >= {"semantic", "keyword", "total"}
    done = frames[-1]
    assert done["status"] == "complete"
    assert done["reply"] == ANSWER
    assert await messages_of(done["conversation_id"]) == [
        ("user", "电脑花屏了怎么办？", "complete"), ("assistant", ANSWER, "complete")]
    # the recalled memory reached the LLM as a system message, before the question
    sent = llm_online.chat_requests()[-1].messages
    assert sent[1]["role"] == "system"
    assert "笔记本电脑" in sent[1]["content"]
    assert "当前案件层" in sent[1]["content"]
    assert sent[-1] == {"role": "user", "content": "电脑花屏了怎么办？"}
    # right before it, the reminder to cite the numbered items (a small model follows the last instruction)
    assert sent[-2] == {"role": "system", "content": chat_turns.CITATION_REMINDER}
    await communicator.disconnect()


async def test_extraction_is_enqueued_once_per_turn(world, llm_online):
    llm_online.script(text_reply(ANSWER))
    communicator, _ = await connected(world.alice)
    await communicator.send_json_to({"type": "ask", "question": "我在3月1日买的电脑，两周后花屏。"})
    done = (await frames_until(communicator, "done"))[-1]
    turns = await sync_to_async(list)(TurnExtraction.objects.filter(conversation_id=done["conversation_id"]))
    assert len(turns) == 1
    assert turns[0].assistant_message_id == done["message_id"]
    assert await sync_to_async(DBTaskResult.objects.count)() == 1
    await communicator.disconnect()


async def test_cancel_stops_within_a_token_and_keeps_the_partial_reply(world, llm_online):
    llm_online.script(text_reply("一" * 400, token_delay=0.02))
    communicator, _ = await connected(world.alice)
    await communicator.send_json_to({"type": "ask", "question": "请详细分析押金纠纷。"})
    tokens = 0
    while tokens < 3:
        frame = await communicator.receive_json_from(timeout=5)
        tokens += frame["type"] == "token"
    await communicator.send_json_to({"type": "cancel"})
    frames = await frames_until(communicator, "done")
    late_tokens = [f for f in frames if f["type"] == "token"]
    assert len(late_tokens) <= 2  # at most what was already in flight
    done = frames[-1]
    assert done["status"] == "cancelled"
    assert 3 <= len(done["reply"]) < 400
    stored = await messages_of(done["conversation_id"])
    assert stored[0] == ("user", "请详细分析押金纠纷。", "complete")
    assert stored[1][2] == "cancelled"
    assert stored[1][1] == done["reply"]
    request = llm_online.chat_requests()[-1]
    await asyncio.to_thread(request.done.wait, 5)
    assert request.disconnected
    assert request.chunks_sent < 400
    await communicator.disconnect()


async def test_disconnect_cancels_the_llm_request_and_saves_the_question(world, llm_online):
    llm_online.script(text_reply("二" * 400, token_delay=0.02))
    communicator, _ = await connected(world.alice)
    await communicator.send_json_to({"type": "ask", "question": "加班费怎么计算？"})
    conversation_id = (await communicator.receive_json_from(timeout=5))["conversation_id"]
    while (await communicator.receive_json_from(timeout=5))["type"] != "token":
        pass
    await communicator.disconnect()
    request = llm_online.chat_requests()[-1]
    await asyncio.to_thread(request.done.wait, 5)
    assert request.disconnected
    assert request.chunks_sent < 400
    stored = await messages_of(conversation_id)
    assert stored[0] == ("user", "加班费怎么计算？", "complete")
    assert stored[1][0] == "assistant"
    assert stored[1][2] == "cancelled"


@pytest.mark.parametrize(
    "reply, partial",
    [
        (error_reply(500, "upstream exploded"), ""),
        (stream_error_reply("结论：可以", after=3, message="The model crashed."), "结论："),
        (stream_stall_reply("结论：可以要求退款", after=2, seconds=5), "结论"),
    ],
    ids=["http-500", "error-mid-stream", "stall-mid-stream"],
)
async def test_llm_failures_reach_the_user_and_nothing_is_lost(world, llm_online, reply, partial):
    llm_online.script(reply)
    communicator, _ = await connected(world.alice)
    await communicator.send_json_to({"type": "ask", "question": "课程退款能要回多少？"})
    frames = await frames_until(communicator, "done", timeout=15)
    errors = [f for f in frames if f["type"] == "error"]
    assert errors
    assert errors[0]["code"] == "llm_failed"
    assert errors[0]["message"]
    done = frames[-1]
    assert done["status"] == "failed"
    assert done["reply"].startswith(partial)
    stored = await messages_of(done["conversation_id"])
    assert stored[0] == ("user", "课程退款能要回多少？", "complete")
    assert stored[1] == ("assistant", done["reply"], "failed")
    await communicator.disconnect()


async def test_offline_engine_answers_from_memory_and_says_so(world, llm_offline):
    await sync_to_async(world.note)("用户希望先给结论，再列证据清单。", scope=MemoryScope.USER_PROFILE,
                                    owner=world.alice, category="preference")
    communicator, ready = await connected(world.alice)
    assert ready["engine"] == "offline"
    await communicator.send_json_to({"type": "ask", "question": "我喜欢怎样的回答方式？"})
    frames = await frames_until(communicator, "done")
    reply = frames[-1]["reply"]
    assert reply.startswith("【离线引擎】")
    assert "先给结论" in reply
    assert "".join(f["text"] for f in frames if f["type"] == "token") == reply
    await communicator.disconnect()


@pytest.mark.parametrize(
    "raw, code",
    [
        ("{not json", "bad_json"),
        ("[1, 2]", "bad_frame"),
        (json.dumps({"type": "dance"}), "unknown_type"),
        (json.dumps({"type": "ask", "question": "   "}), "empty_question"),
        (json.dumps({"type": "ask", "question": "问" * 4001}), "question_too_long"),
        (json.dumps({"type": "ask", "question": "x", "matter_id": "1; drop"}), "bad_request"),
    ],
)
async def test_bad_frames_get_an_error_frame_and_the_socket_stays_usable(world, llm_offline, raw, code):
    communicator, _ = await connected(world.alice)
    await communicator.send_to(text_data=raw)
    frame = await communicator.receive_json_from(timeout=5)
    assert frame["type"] == "error"
    assert frame["code"] == code
    assert frame["message"]
    await communicator.send_json_to({"type": "ask", "question": "押金的事情怎么办？"})
    assert (await frames_until(communicator, "done"))[-1]["status"] == "complete"
    await communicator.disconnect()


async def test_flooding_is_rate_limited(world, llm_offline, settings):
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 2
    communicator, _ = await connected(world.alice)
    for _ in range(2):
        await communicator.send_json_to({"type": "ask", "question": "押金何时退还？"})
        await frames_until(communicator, "done")
    await communicator.send_json_to({"type": "ask", "question": "押金何时退还？"})
    frame = await communicator.receive_json_from(timeout=5)
    assert frame == {"type": "error", "code": "rate_limited", "message": "提问过于频繁，请稍后再试。"}
    await communicator.disconnect()


async def test_a_second_ask_while_streaming_is_refused(world, llm_online):
    llm_online.script(text_reply("三" * 100, token_delay=0.02))
    communicator, _ = await connected(world.alice)
    await communicator.send_json_to({"type": "ask", "question": "维修费谁承担？"})
    await communicator.receive_json_from(timeout=5)
    await communicator.send_json_to({"type": "ask", "question": "再问一个"})
    frames = await frames_until(communicator, "done")
    assert any(f["type"] == "error" and f["code"] == "busy" for f in frames)
    await communicator.disconnect()


async def test_anonymous_connection_is_closed():
    communicator = await open_socket(None)
    connected_, _ = await communicator.connect()
    assert connected_  # accepted, then closed with 4401 (not a bare HTTP 403)
    assert await communicator.receive_output(timeout=5) == {"type": "websocket.close", "code": 4401}
    await communicator.disconnect()


async def test_foreign_origin_is_rejected(world):
    communicator = await open_socket(world.alice, origin=(b"origin", b"http://evil.example"))
    connected_, _ = await communicator.connect()
    assert not connected_
    await communicator.disconnect()


async def test_other_users_conversations_and_walled_matters_are_refused(world, llm_offline):
    alice_conversation = await sync_to_async(Conversation.objects.create)(firm=world.firm_a, user=world.alice, title="alice")
    for user, frame in [
        (world.bob, {"type": "ask", "question": "看看别人的对话", "conversation_id": alice_conversation.pk}),
        (world.charlie, {"type": "ask", "question": "看看别的律所的对话", "conversation_id": alice_conversation.pk}),
        (world.bob, {"type": "ask", "question": "押金案件", "matter_id": world.matter_deposit.pk}),
        (world.charlie, {"type": "ask", "question": "电脑案件", "matter_id": world.matter_laptop.pk}),
    ]:
        communicator, _ = await connected(user)
        await communicator.send_json_to(frame)
        reply = await communicator.receive_json_from(timeout=5)
        assert reply["type"] == "error"
        assert reply["code"] == "not_found"
        await communicator.disconnect()
    assert await sync_to_async(Message.objects.count)() == 0


async def test_recalled_memories_never_cross_the_wall(world, llm_offline):
    walled = await sync_to_async(world.note)("房东扣留押金3000元。", matter=world.matter_deposit)
    other_firm = await sync_to_async(world.note)("Beta 客户的押金机密。", firm=world.firm_b, matter=world.matter_b)
    own = await sync_to_async(world.note)("商家收取了电脑维修押金500元。", matter=world.matter_laptop)
    for user, sees, never in ((world.bob, own, (walled, other_firm)), (world.charlie, other_firm, (walled, own))):
        communicator, _ = await connected(user)
        await communicator.send_json_to({"type": "ask", "question": "押金被扣了多少？"})
        frames = await frames_until(communicator, "done")
        recalled = {n["id"] for n in next(f for f in frames if f["type"] == "recalled")["notes"]}
        assert str(sees.pk) in recalled  # recall works for this user: the absences below mean something
        text = json.dumps(frames, ensure_ascii=False)
        for note in never:
            assert str(note.pk) not in recalled
            assert note.content not in text
        await communicator.disconnect()


async def test_a_question_about_something_only_behind_the_wall_is_answered_with_nothing(world, llm_offline):
    await sync_to_async(world.note)("陈露的房东扣留押金8,800元。", matter=world.matter_deposit)
    await sync_to_async(world.note)("商家收取了电脑维修押金500元。", matter=world.matter_laptop)
    asked = {}
    for user in (world.alice, world.bob, world.charlie):
        communicator, _ = await connected(user)
        await communicator.send_json_to({"type": "ask", "question": "陈露那个房东扣的押金后来怎么样了？"})
        frames = await frames_until(communicator, "done")
        asked[user.username] = (next(f for f in frames if f["type"] == "recalled"), frames[-1]["reply"])
        await communicator.disconnect()

    recalled, reply = asked["alice"]
    assert recalled["nothing_on"] == []
    assert "8,800" in reply
    for outsider in ("bob", "charlie"):
        recalled, reply = asked[outsider]
        assert recalled["nothing_on"] == ["陈露"]
        assert recalled["notes"] == []
        assert "记忆中没有任何提到“陈露”的内容" in reply
        assert "押金" not in reply


async def test_imported_history_does_not_count_against_the_rate_limit(world, llm_offline, settings):
    settings.CHAT_RATE_LIMIT_PER_MINUTE = 2

    @sync_to_async
    def import_history() -> None:
        from memory.services.conversations import save_message

        imported = Conversation.objects.create(firm=world.firm_a, user=world.alice, title="导入", external_id="story:1")
        for index in range(10):
            save_message(imported, "user", f"第{index}个导入的问题", speaker="alice", external_id=f"m{index}")

    await import_history()
    communicator, _ = await connected(world.alice)
    await communicator.send_json_to({"type": "ask", "question": "押金何时退还？"})
    assert (await frames_until(communicator, "done"))[-1]["status"] == "complete"
    await communicator.disconnect()
