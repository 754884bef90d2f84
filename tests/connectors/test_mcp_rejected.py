"""Calls the SDK refuses before a tool runs — arguments the tool's signature refuses, an unknown
tool or resource — are audited like every call and answered in the caller's language, without
pydantic's English or its links; a tool's own error comes back without the SDK's English prefix."""
from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import httpx
import pytest
from asgiref.sync import async_to_sync
from mcp.shared.exceptions import McpError
from mcp.shared.memory import create_connected_server_and_client_session

from connectors.mcp_http import McpEndpoint, WithMcp
from connectors.mcp_server import Caller, current_caller, server
from memory.models import AuditEvent, AuditLog
from tests.connectors.conftest import make_token, mcp_calls

LIBRARY_WORDS = re.compile(r"pydantic|https?://|validation error|Input should|type=|Error executing|Unknown tool",
                           re.IGNORECASE)


def error_text(result) -> str:
    assert result.isError, result
    return result.content[0].text


def read_refused(token, uri: str, language: str = "en") -> str:
    """The JSON-RPC error message a resource read gets (through the SDK's client session)."""
    async def go() -> str:
        reset = current_caller.set(Caller(token, "127.0.0.1", language))
        try:
            async with create_connected_server_and_client_session(server) as session:
                try:
                    await session.read_resource(uri)
                except McpError as error:
                    return error.error.message
                raise AssertionError(f"{uri} was read")
        finally:
            current_caller.reset(reset)
    return async_to_sync(go)()


def audited(token) -> list[tuple]:
    entries = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, object_id=str(token.pk)).order_by("id")
    return [(e.extra.get("tool") or e.extra.get("resource"), e.extra["outcome"], e.extra.get("reason"))
            for e in entries]


@pytest.mark.django_db
def test_calls_refused_before_the_tool_runs_are_audited(world, memory):
    token = make_token(world.alice).token
    results = mcp_calls(token, [
        ("search_memory", {"query": "电脑", "k": "many"}),
        ("search_memory", {}),
        ("no_such_tool", {"x": 1}),
        ("evil\x00tool" + "x" * 500, {}),
    ])
    assert read_refused(token, "legalmem://nowhere") == (
        "No such resource. The resources are: legalmem://matters, legalmem://matters/{matter_id}, "
        "legalmem://notes/{note_id}.")
    mcp_calls(token, [("list_matters", {})])
    assert all(result.isError for result in results[:4])
    assert audited(token) == [
        ("search_memory", "rejected", "invalid_arguments"),
        ("search_memory", "rejected", "invalid_arguments"),
        ("no_such_tool", "rejected", "unknown_tool"),
        ("evil?tool" + "x" * 91, "rejected", "unknown_tool"),  # printable and short, as it may be shown
        ("legalmem://nowhere", "rejected", "unknown_resource"),
        ("list_matters", "ok", None),
    ]
    entry = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, extra__outcome="rejected").first()
    assert (entry.actor, entry.firm_id, entry.extra["via"], entry.extra["ip_address"]) == (
        world.alice, world.firm_a.pk, "mcp", "127.0.0.1")


@pytest.mark.django_db
@pytest.mark.parametrize("language, expected", [
    ("en", ["Invalid arguments for search_memory: k must be a whole number; scopes[1] must be text.",
            "Invalid arguments for search_memory: query is required.",
            "Invalid arguments for get_note: note_id must be text.",
            "No such tool. The tools are: correct_note, forget_note, get_note, list_matters, remember, "
            "search_memory."]),
    ("zh-hans", ["search_memory 的参数无效：k 必须是整数; scopes[1] 必须是文本。",
                 "search_memory 的参数无效：缺少 query。",
                 "get_note 的参数无效：note_id 必须是文本。",
                 "没有这个工具。可用的工具：correct_note, forget_note, get_note, list_matters, remember, "
                 "search_memory。"]),
])
def test_argument_errors_speak_the_callers_language_without_library_text(world, memory, language, expected):
    token = make_token(world.bob).token
    results = mcp_calls(token, [
        ("search_memory", {"query": "电脑", "k": "many", "scopes": ["case", {"a": 1}]}),
        ("search_memory", {"k": 3}),
        ("get_note", {"note_id": 12}),
        ("forget_everything", {}),
    ], language=language)
    texts = [error_text(result) for result in results]
    assert texts == expected
    assert not any(LIBRARY_WORDS.search(text) for text in texts), texts


@pytest.mark.django_db
def test_a_tools_own_error_comes_back_without_the_sdks_english_prefix(world, memory):
    token = make_token(world.bob).token
    [result] = mcp_calls(token, [("remember", {"message": "记住这个"})], language="zh-hans")
    assert error_text(result) == "这个令牌是只读的：未写入任何内容。"


@pytest.mark.django_db
@pytest.mark.parametrize("language, expected", [
    ("en", "strategy: unknown strategy 'nope'; the strategies are: "),
    ("zh-hans", "strategy: 没有名为 'nope' 的检索策略；可用的策略："),
])
def test_an_unknown_strategy_is_named_in_the_callers_language(world, memory, language, expected):
    token = make_token(world.bob).token
    [result] = mcp_calls(token, [("search_memory", {"query": "电脑", "strategy": "nope"})], language=language)
    text = error_text(result)
    assert text.startswith(expected) and "layered" in text, text
    assert audited(token) == [("search_memory", "error", None)]


@pytest.mark.django_db
@pytest.mark.parametrize("language, expected", [
    ("en", ["scopes[1]: \"nope\" is not a valid choice.", "k: Ensure this value is less than or equal to 50."]),
    ("zh-hans", ["scopes[1]: “nope” 不是合法选项。", "k: 请确保该值小于或者等于 50。"]),
])
def test_the_searchs_own_checks_name_the_argument_in_the_callers_language(world, memory, language, expected):
    token = make_token(world.bob).token
    results = mcp_calls(token, [("search_memory", {"query": "电脑", "scopes": ["case", "nope"]}),
                                ("search_memory", {"query": "电脑", "k": 99})], language=language)
    assert [error_text(result) for result in results] == expected


def post_mcp(secret: str, arguments: dict, **headers: str) -> httpx.Response:
    """One ``tools/call`` of search_memory POSTed to /mcp through the site's ASGI app, from 192.0.2.10."""
    return post_raw(secret, {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                             "params": {"name": "search_memory", "arguments": arguments}}, **headers)


def post_raw(secret: str, body: dict, **headers: str) -> httpx.Response:
    """One JSON-RPC message POSTed to /mcp through the site's ASGI app, from 192.0.2.10."""
    async def django_app(scope, receive, send) -> None:
        raise AssertionError(f"{scope['path']} went to Django")

    async def go() -> httpx.Response:
        transport = httpx.ASGITransport(app=WithMcp(django_app, McpEndpoint(server)), client=("192.0.2.10", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            return await client.post("/mcp", json=body, headers={
                "Accept": "application/json, text/event-stream", "Authorization": f"Bearer {secret}", **headers})

    return asyncio.run(go())


@pytest.mark.django_db(transaction=True)  # the endpoint reads the token on its own thread
def test_requests_the_protocol_refuses_are_audited_and_answered_without_the_sdks_words(world, settings, caplog):
    """What no SDK client sends but a hand-made one may: the SDK would answer "Invalid request parameters" after
    logging pydantic's account of the input (the arguments, a client's name among them) and audit nothing."""
    settings.ALLOWED_HOSTS = ["localhost"]
    token = make_token(world.alice, language="en")
    secret_words = "穆晓岚 110101199003071234"
    requests = [
        ("tools/call", {"name": "search_memory", "arguments": secret_words}),  # arguments that are no object
        ("tools/call", {"arguments": {"query": secret_words}}),  # no tool named
        ("resources/read", {"uri": 7}),
        ("tools/delete_everything", {}),
    ]
    answers = [post_raw(token.secret, {"jsonrpc": "2.0", "id": n, "method": method, "params": params}).json()
               for n, (method, params) in enumerate(requests)]
    assert [(a["id"], a["error"]["code"], a["error"]["message"]) for a in answers] == [
        (0, -32602, "The parameters of this tools/call request are not as the MCP protocol defines them."),
        (1, -32602, "The parameters of this tools/call request are not as the MCP protocol defines them."),
        (2, -32602, "The parameters of this resources/read request are not as the MCP protocol defines them."),
        (3, -32601, "No such method in the MCP protocol: tools/delete_everything."),
    ]
    used = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, object_id=str(token.token.pk)).order_by("id")
    assert [(e.extra.get("tool") or e.extra.get("method"), e.extra["outcome"], e.extra["reason"]) for e in used] == [
        ("search_memory", "rejected", "invalid_request"),
        ("tools/call", "rejected", "invalid_request"),
        ("resources/read", "rejected", "invalid_request"),
        ("tools/delete_everything", "rejected", "unknown_method"),
    ]
    assert all(e.extra["ip_address"] == "192.0.2.10" and e.actor == world.alice for e in used)
    assert "穆晓岚" not in json.dumps([e.extra for e in used], ensure_ascii=False)  # the refused values are not kept
    assert "穆晓岚" not in caplog.text and "Failed to validate" not in caplog.text  # nor logged


@pytest.mark.django_db
def test_an_unknown_prompt_is_audited_and_answered_in_the_callers_language(world, memory):
    token = make_token(world.bob).token

    async def go() -> str:
        reset = current_caller.set(Caller(token, "127.0.0.1", "zh-hans"))
        try:
            async with create_connected_server_and_client_session(server) as session:
                with pytest.raises(McpError) as refused:
                    await session.get_prompt("summarise_everything", {"matter": "M-001"})
                return refused.value.error.message
        finally:
            current_caller.reset(reset)

    assert async_to_sync(go)() == "没有这个提示模板：本服务器只提供工具和资源，不提供提示模板。"
    assert audited(token) == [("summarise_everything", "rejected", "unknown_prompt")]


@pytest.mark.django_db(transaction=True)  # the endpoint reads the token on its own thread
def test_over_http_the_language_chosen_for_the_token_beats_the_clients(world, settings):
    settings.ALLOWED_HOSTS = ["localhost"]
    english = make_token(world.alice, language="en").secret  # the site itself speaks Chinese (LANGUAGE_CODE)
    chinese = make_token(world.alice, language="zh-hans").secret
    texts = [post_mcp(secret, {"query": "电脑", "k": "ten"}, **headers).json()["result"]["content"][0]["text"]
             for secret, headers in ((english, {}), (english, {"Accept-Language": "zh-CN,zh;q=0.9"}),
                                     (chinese, {"Accept-Language": "en-US,en;q=0.9"}))]
    assert texts == ["Invalid arguments for search_memory: k must be a whole number."] * 2 + [
        "search_memory 的参数无效：k 必须是整数。"]


@pytest.mark.django_db(transaction=True)  # the endpoint reads the token on its own thread
def test_over_http_a_refused_argument_is_audited_and_answered_in_the_accept_language(world, settings):
    settings.ALLOWED_HOSTS = ["localhost"]
    token = make_token(world.alice)  # no language chosen for it (made before tokens had one): the client's
    response = post_mcp(token.secret, {"query": "电脑", "k": "ten"}, **{"Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"})
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] and result["content"][0]["text"] == "search_memory 的参数无效：k 必须是整数。"
    [entry] = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, object_id=str(token.token.pk))
    assert entry.extra == {**entry.extra, "tool": "search_memory", "outcome": "rejected",
                           "reason": "invalid_arguments", "via": "mcp", "ip_address": "192.0.2.10"}
    assert "ten" not in json.dumps(entry.extra, ensure_ascii=False)  # the refused value is not kept


@pytest.mark.django_db(transaction=True)  # the endpoint reads the token on its own thread
def test_refusals_before_the_sdk_speak_the_callers_language_too(world, settings):
    settings.ALLOWED_HOSTS = ["localhost"]
    english = make_token(world.alice, language="en").secret
    deep: Any = "x"
    for _ in range(200):
        deep = [deep]
    no_token = post_raw("", {"jsonrpc": "2.0", "id": 1, "method": "ping"}, **{"Accept-Language": "zh-CN"})
    too_deep = post_raw(english, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                  "params": {"name": "search_memory", "arguments": {"query": deep}}})
    assert (no_token.status_code, no_token.json()["error"]["message"]) == (
        401, "需要访问令牌：Authorization: Bearer <令牌>。")
    assert too_deep.status_code == 400
    assert too_deep.json()["error"]["message"].startswith("The request is nested more than ")
