"""The MCP tools through the SDK's own client session (in process): the same walls as the web,
narrowed by a token's matters, read-only tokens write nothing, every call audited, hostile
arguments answered with MCP errors (never a traceback)."""
from __future__ import annotations

import json

import pytest

from connectors.mcp_server import server
from memory.models import AuditEvent, AuditLog, Conversation, Message, Note
from tests.clients import client_for
from tests.connectors.conftest import make_token, mcp_calls, scores
from tests.task_worker import run_worker_once

pytestmark = pytest.mark.django_db


def payload(result) -> dict:
    assert not result.isError, result.content[0].text
    return result.structuredContent if result.structuredContent is not None else json.loads(result.content[0].text)


def error_text(result) -> str:
    assert result.isError, result
    return result.content[0].text


def hit_ids(data: dict) -> list[str]:
    return [h["note"]["id"] if h["note"] else f"m{h['message']['id']}" for h in data["hits"]]


def test_the_tools_are_listed_with_their_schemas():
    from asgiref.sync import async_to_sync

    tools = async_to_sync(server.list_tools)()
    assert {t.name for t in tools} == {"search_memory", "remember", "get_note", "list_matters", "correct_note",
                                       "forget_note"}


def test_search_equals_the_web_api_for_the_same_user(world, memory):
    token = make_token(world.alice).token
    query = {"query": "这个电脑花屏纠纷下一步怎么走？", "k": 8, "matter": world.matter_laptop.pk}
    [result] = mcp_calls(token, [("search_memory", query)], language="zh-hans")  # the web's default language
    by_mcp = payload(result)
    by_web = client_for(world.alice).post("/api/memory/search", data=json.dumps(query),
                                          content_type="application/json").json()
    assert hit_ids(by_mcp) == hit_ids(by_web) and hit_ids(by_mcp)
    assert [(h["layer"], h["reasons"], scores(h)) for h in by_mcp["hits"]] == \
        [(h["layer"], h["reasons"], scores(h)) for h in by_web["hits"]]
    assert by_mcp["plan"] == by_web["plan"] and by_mcp["system_message"] == by_web["system_message"]
    first = by_mcp["hits"][0]["note"]
    assert {"source_type", "source_message_ids", "matter", "stored_at"} <= set(first)  # provenance


@pytest.mark.parametrize("who, forbidden", [
    ("alice", {"secret_fact", "bob_profile", "beta_fact", "beta_law"}),
    ("bob", {"secret_fact", "alice_profile", "deposit_fact", "deposit_photos", "beta_fact", "beta_law"}),
    ("charlie", {"laptop_screen", "laptop_report", "deposit_fact", "deposit_photos", "secret_fact", "alice_profile",
                 "bob_profile", "law", "cross", "procedure"}),
])
def test_every_tool_keeps_the_walls(world, memory, who, forbidden):
    user = getattr(world, who)
    token = make_token(user).token
    forbidden_ids = {str(memory[key].pk) for key in forbidden}
    calls = [("search_memory", {"query": q, "k": 50}) for q in ("电脑花屏 检测报告", "押金 交接照片", "并购 估值", "Beta 客户")]
    calls += [("get_note", {"note_id": note_id}) for note_id in sorted(forbidden_ids)]
    calls += [("list_matters", {})]
    results = mcp_calls(token, calls)
    for result in results[:4]:
        assert not set(hit_ids(payload(result))) & forbidden_ids
    for result in results[4:-1]:
        assert "Not found" in error_text(result)
    matters = {m["id"] for m in payload(results[-1])["matters"]}
    assert matters == {m.pk for m in user.matters.all()}
    if who == "bob":
        assert world.matter_deposit.pk not in matters
        [walled] = mcp_calls(token, [("search_memory", {"query": "押金", "matter": world.matter_deposit.pk})])
        assert "Not found" in error_text(walled)


def test_a_matter_limited_token_narrows_search_notes_and_matters(world, memory):
    token = make_token(world.alice, matters=[world.matter_laptop]).token
    search, deposit, matters, elsewhere = mcp_calls(token, [
        ("search_memory", {"query": "押金 交接照片 电脑花屏", "k": 50}),
        ("get_note", {"note_id": str(memory["deposit_fact"].pk)}),
        ("list_matters", {}),
        ("search_memory", {"query": "押金", "matter": world.matter_deposit.pk}),
    ])
    ids = set(hit_ids(payload(search)))
    assert str(memory["laptop_screen"].pk) in ids
    assert not ids & {str(memory["deposit_fact"].pk), str(memory["deposit_photos"].pk)}
    assert "Not found" in error_text(deposit) and "Not found" in error_text(elsewhere)
    assert [m["id"] for m in payload(matters)["matters"]] == [world.matter_laptop.pk]


def test_a_read_only_token_cannot_write_and_nothing_is_written(world, memory):
    token = make_token(world.alice, scope="read").token
    note = memory["alice_profile"]
    before = (Message.objects.count(), Conversation.objects.count(), Note.objects.get(pk=note.pk).content)
    results = mcp_calls(token, [
        ("remember", {"message": "客户说押金已经退了一半。"}),
        ("correct_note", {"note_id": str(note.pk), "content": "改掉"}),
        ("forget_note", {"note_id": str(note.pk)}),
    ])
    for result in results:
        assert "read-only" in error_text(result)
    assert (Message.objects.count(), Conversation.objects.count(), Note.objects.get(pk=note.pk).content) == before
    refused = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_REFUSED, object_id=str(token.pk))
    assert sorted(e.extra["tool"] for e in refused) == ["correct_note", "forget_note", "remember"]


def test_remember_goes_through_the_write_path_and_the_next_search_recalls_it(
        world, memory, django_capture_on_commit_callbacks):
    token = make_token(world.bob, scope="read_write").token
    with django_capture_on_commit_callbacks(execute=True):
        [saved] = mcp_calls(token, [("remember", {
            "message": "我在2024年3月5日花5999元买了一台笔记本电脑，电脑在购买后约两周出现大面积花屏，商家拒绝退货。",
            "reply": "建议先保存购买凭证和故障照片，再与商家协商。", "matter": world.matter_laptop.pk})])
    saved = payload(saved)
    conversation = Conversation.objects.get(pk=saved["conversation_id"])
    assert (conversation.user, conversation.matter, conversation.firm) == (world.bob, world.matter_laptop, world.firm_a)
    assert run_worker_once().status == "SUCCESSFUL"
    made = Note.objects.filter(conversation=conversation)
    assert made.exists()
    [found] = mcp_calls(token, [("search_memory", {"query": "5999元 笔记本电脑", "k": 10,
                                                   "matter": world.matter_laptop.pk})])
    recalled = set(hit_ids(payload(found)))
    assert recalled & {str(n.pk) for n in made} or f"m{saved['message_id']}" in recalled


def test_get_correct_and_forget_use_the_users_own_rules(world, memory):
    token = make_token(world.alice, scope="read_write").token
    mine = memory["alice_profile"]
    firm_wide = memory["procedure"]
    got, corrected, forgotten, again = mcp_calls(token, [
        ("get_note", {"note_id": str(mine.pk)}),
        ("correct_note", {"note_id": str(mine.pk), "content": "alice 希望先列证据清单，再给结论。", "reason": "说反了"}),
        ("forget_note", {"note_id": str(mine.pk), "reason": "不再适用"}),
        ("get_note", {"note_id": str(mine.pk)}),
    ])
    [refused] = mcp_calls(make_token(world.bob, scope="read_write").token, [
        ("correct_note", {"note_id": str(firm_wide.pk), "content": "改掉本所流程"})])
    assert Note.objects.get(pk=firm_wide.pk).content == firm_wide.content
    assert payload(got)["note"]["content"] == mine.content and payload(got)["can_change"]
    assert payload(corrected)["content"] == "alice 希望先列证据清单，再给结论。"
    assert "may not change" in error_text(refused)
    assert payload(forgotten)["status"] == "forgotten"
    history = payload(again)["history"]
    assert [entry["event"] for entry in history][-2:] == ["corrected", "forgotten"]
    entry = AuditLog.objects.get(event_type=AuditEvent.NOTE_FORGOTTEN, object_id=str(mine.pk))
    assert entry.extra["via"] == "mcp" and entry.actor == world.alice


def test_every_call_is_audited_with_the_tokens_id(world, memory):
    token = make_token(world.alice).token
    mcp_calls(token, [("list_matters", {}), ("search_memory", {"query": "电脑"}),
                      ("get_note", {"note_id": "not-a-uuid"}), ("legalmem://matters", {})])
    used = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, object_id=str(token.pk)).order_by("id")
    assert [(e.extra.get("tool") or e.extra.get("resource"), e.extra["outcome"]) for e in used] == [
        ("list_matters", "ok"), ("search_memory", "ok"), ("get_note", "error"), ("legalmem://matters", "ok")]
    assert all(e.extra["via"] == "mcp" and e.actor == world.alice and e.firm_id == world.firm_a.pk for e in used)


HOSTILE = [
    ("search_memory", {"query": "x" * 100_000}),
    ("search_memory", {"query": "电脑\x00花屏"}),
    ("search_memory", {"query": {"nested": [[[["deep"]]]]}}),
    ("search_memory", {"query": "电脑", "k": "many"}),
    ("search_memory", {"query": "电脑", "k": 10**30}),
    ("search_memory", {"query": "电脑", "scopes": ["case", {"a": 1}]}),
    ("search_memory", {"query": "电脑", "strategy": "nope"}),
    ("search_memory", {"query": "电脑", "matter": -5}),
    ("remember", {"message": "电脑\x00花屏"}),
    ("remember", {"message": "y" * 100_000}),
    ("remember", {"message": ["a", "b"]}),
    ("remember", {"message": "  "}),
    ("get_note", {"note_id": "\x00"}),
    ("get_note", {"note_id": 12}),
    ("correct_note", {"note_id": "00000000-0000-0000-0000-000000000000", "content": "x"}),
    ("forget_note", {"note_id": "../../etc/passwd"}),
    ("no_such_tool", {}),
]


def test_hostile_arguments_get_mcp_errors_never_a_traceback(world, memory):
    token = make_token(world.alice, scope="read_write").token
    before = Message.objects.count()
    results = mcp_calls(token, HOSTILE)
    for (name, _arguments), result in zip(HOSTILE, results):
        text = error_text(result)
        assert "Traceback" not in text and "File \"" not in text, (name, text)
        assert len(text) < 2000, (name, text[:200])
    assert Message.objects.count() == before


def test_errors_speak_the_callers_language(world, memory):
    token = make_token(world.bob).token
    for language, expected in (("zh-hans", "这个令牌是只读的：未写入任何内容。"), ("en", "This token is read-only")):
        [result] = mcp_calls(token, [("remember", {"message": "记住这个"})], language=language)
        assert expected in error_text(result)
