"""The MCP server as a client really meets it: a real Daphne started as `make run` starts it,
``/mcp`` over Streamable HTTP with the SDK's own client (``streamablehttp_client`` +
``ClientSession``), and ``manage.py mcp --token-file`` over stdio (``stdio_client``)."""
from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from connectors.models import TokenRefusal
from connectors.services import revoke_token
from memory.models import AuditEvent, AuditLog, Conversation, Message, Note
from tests.connectors.conftest import expire, make_token, scores
from tests.live_server import test_database_url
from tests.site.conftest import live_daphne, live_daphne_env  # noqa: F401 — the real Daphne server
from django.db import transaction
from django_tasks_db.management.commands.db_worker import Worker
from django_tasks_db.models import DBTaskResult

BASE_DIR = Path(__file__).resolve().parents[2]
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


def run_claimed(task: DBTaskResult) -> None:
    """Run a claimed task as ``manage.py db_worker`` does (tests/task_worker.py, outside a transaction)."""
    Worker(queue_names=["default"], interval=0, batch=True, backend_name="default", startup_delay=False,
           max_tasks=1, worker_id="test-worker", excluded_queue_names=[]).run_task(task)


async def _session_calls(url: str, secret: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    http = httpx.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=httpx.Timeout(60, read=300))
    async with http, streamable_http_client(url, http_client=http) as (read, write, _id):
        async with ClientSession(read, write) as session:
            await session.initialize()
            results = []
            for name, arguments in calls:
                if name == "list_tools":
                    results.append(await session.list_tools())
                elif name.startswith("legalmem://"):
                    results.append(await session.read_resource(name))
                else:
                    results.append(await session.call_tool(name, arguments))
            return results


def over_http(server, secret: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    return asyncio.run(_session_calls(f"{server.url}/mcp", secret, calls))


def data(result) -> dict:
    assert not result.isError, result.content[0].text
    return json.loads(result.content[0].text)


def hit_ids(body: dict) -> list[str]:
    return [h["note"]["id"] if h["note"] else f"m{h['message']['id']}" for h in body["hits"]]


def raw_post(server, secret: str | None, body: Any = INITIALIZE, **headers) -> httpx.Response:
    if secret is not None:
        headers["Authorization"] = f"Bearer {secret}"
    return httpx.post(f"{server.url}/mcp", json=body, timeout=30,
                      headers={"Accept": "application/json, text/event-stream", **headers})


@pytest.mark.live_server
def test_mcp_over_http_keeps_the_walls_and_equals_the_web_api(world, memory, live_daphne):
    alice, bob, charlie = (make_token(u).secret for u in (world.alice, world.bob, world.charlie))
    query = {"query": "这个电脑花屏纠纷下一步怎么走？", "k": 8, "matter": world.matter_laptop.pk}
    tools, search, matters, note = over_http(live_daphne, alice, [
        ("list_tools", {}), ("search_memory", query), ("list_matters", {}),
        ("get_note", {"note_id": str(memory["laptop_report"].pk)})])
    assert {t.name for t in tools.tools} >= {"search_memory", "remember", "get_note", "list_matters",
                                             "correct_note", "forget_note"}
    by_mcp = data(search)
    assert {str(memory["laptop_screen"].pk), str(memory["laptop_report"].pk)} <= set(hit_ids(by_mcp))
    web = httpx.post(f"{live_daphne.url}/api/memory/search", json=query, timeout=30,
                     headers={"Authorization": f"Bearer {alice}"})
    assert web.status_code == 200
    by_web = web.json()
    assert hit_ids(by_mcp) == hit_ids(by_web)  # the recall of the same search, through MCP and the web API
    assert [(h["layer"], h["reasons"], scores(h)) for h in by_mcp["hits"]] == \
        [(h["layer"], h["reasons"], scores(h)) for h in by_web["hits"]]
    assert by_mcp["plan"] == by_web["plan"]
    assert {m["id"] for m in data(matters)["matters"]} == {world.matter_laptop.pk, world.matter_deposit.pk}
    assert data(note)["note"]["content"] == memory["laptop_report"].content

    deposit = {str(memory["deposit_fact"].pk), str(memory["deposit_photos"].pk)}
    bob_search, bob_walled, bob_note = over_http(live_daphne, bob, [
        ("search_memory", {"query": "押金 交接照片 墙面污损", "k": 50}),
        ("search_memory", {"query": "押金", "matter": world.matter_deposit.pk}),
        ("get_note", {"note_id": str(memory["deposit_fact"].pk)})])
    assert not set(hit_ids(data(bob_search))) & deposit  # bob gets nothing of M-002 (walled)
    assert bob_walled.isError and bob_note.isError and "Traceback" not in bob_note.content[0].text

    firm_a = {str(n.pk) for key, n in memory.items() if n.firm_id == world.firm_a.pk}
    charlie_search, charlie_matters = over_http(live_daphne, charlie, [
        ("search_memory", {"query": "电脑花屏 押金 并购 偏好 流程", "k": 50}), ("list_matters", {})])
    assert not set(hit_ids(data(charlie_search))) & firm_a  # nothing of the demo firm
    assert [m["id"] for m in data(charlie_matters)["matters"]] == [world.matter_b.pk]

    audited = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, extra__via="mcp")
    assert audited.count() == 8  # every tool call: alice 3, bob 3, charlie 2 (list_tools reads no memory)
    assert {e.extra["tool"] for e in audited} == {"search_memory", "list_matters", "get_note"}


@pytest.mark.live_server
def test_dead_tokens_are_401_read_only_writes_nothing_and_a_remembered_turn_is_recalled(world, memory, live_daphne):
    revoked, expired = make_token(world.alice), make_token(world.alice)
    revoke_token(revoked.token, actor=world.alice)
    expire(expired.token)
    for secret in (None, revoked.secret, expired.secret, "lm_12345678_wrong", "x" * 5000):
        response = raw_post(live_daphne, secret)
        assert response.status_code == 401, (secret, response.text)
        assert response.headers["www-authenticate"].startswith("Bearer")
        assert "error" in response.json()
    with pytest.raises(Exception):  # the SDK's client cannot even initialize
        over_http(live_daphne, revoked.secret, [("list_matters", {})])
    refused = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_REFUSED)
    assert {(e.object_id, e.extra["reason"]) for e in refused} >= {
        (str(revoked.token.pk), "revoked"), (str(expired.token.pk), "expired")}
    assert TokenRefusal.objects.filter(ip_address="127.0.0.1").count() >= 5  # the old bound of the whole address
    assert raw_post(live_daphne, make_token(world.alice).secret).status_code == 200  # a valid token is not blocked
    assert raw_post(live_daphne, revoked.secret).status_code == 401  # (each bad token: tests/connectors/test_throttle.py)

    reader = make_token(world.bob, scope="read").secret
    before = Message.objects.count(), Conversation.objects.count()
    [refusal] = over_http(live_daphne, reader, [("remember", {"message": "客户说押金已经退了一半。"})])
    assert refusal.isError and "read-only" in refusal.content[0].text.lower() or "只读" in refusal.content[0].text
    assert (Message.objects.count(), Conversation.objects.count()) == before

    writer = make_token(world.bob, scope="read_write").secret
    statement = "我在2024年3月5日花5999元买了一台笔记本电脑，电脑在购买后约两周出现大面积花屏，商家拒绝退货。"
    [saved] = over_http(live_daphne, writer, [("remember", {
        "message": statement, "reply": "建议先保存购买凭证和故障照片，再与商家协商。", "matter": world.matter_laptop.pk})])
    saved = data(saved)
    assert Message.objects.get(pk=saved["message_id"]).content == statement
    with transaction.atomic():  # the claim locks its row, as db_worker's own transaction does
        task = DBTaskResult.objects.ready().get_locked()
        task.claim("test-worker")
    run_claimed(task)  # the worker extracts the turn
    task.refresh_from_db()
    assert task.status == "SUCCESSFUL"
    made = {str(pk) for pk in Note.objects.filter(conversation_id=saved["conversation_id"]).values_list("pk", flat=True)}
    assert made
    [found] = over_http(live_daphne, writer, [("search_memory", {"query": "5999元 笔记本电脑 花屏", "k": 10,
                                                                  "matter": world.matter_laptop.pk})])
    assert set(hit_ids(data(found))) & made  # the next search recalls it

    hostile = [("search_memory", {"query": "电脑\x00花屏"}), ("search_memory", {"query": {"a": [[[[1]]]]}}),
               ("search_memory", {"query": "q", "k": "ten"}), ("remember", {"message": "m" * 50_000}),
               ("get_note", {"note_id": "' OR 1=1 --"})]
    for (name, _arguments), result in zip(hostile, over_http(live_daphne, writer, hostile)):
        assert result.isError and "Traceback" not in result.content[0].text, name
    too_big = raw_post(live_daphne, writer, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                             "params": {"name": "search_memory", "arguments": {"query": "q" * 2_000_000}}})
    assert too_big.status_code == 413
    nested = httpx.post(f"{live_daphne.url}/mcp", timeout=30, content=(
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_memory","arguments":{"query":'
        + "[" * 5000 + '"q"' + "]" * 5000 + "}}}"), headers={"Authorization": f"Bearer {writer}",
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    assert nested.status_code < 500 and "error" in nested.json()
    garbage = httpx.post(f"{live_daphne.url}/mcp", timeout=30, content=b"\x00{not json", headers={
        "Authorization": f"Bearer {writer}", "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream"})
    assert garbage.status_code < 500
    assert "Traceback" not in live_daphne.log_text()


@pytest.mark.subprocess
def test_stdio_serves_the_token_user_in_the_language_chosen_for_the_token(world, memory, transactional_db, tmp_path):
    secret = make_token(world.bob, language="en").secret  # the server process itself speaks the site's Chinese
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    env = {**os.environ, "DATABASE_URL": test_database_url()}
    params = StdioServerParameters(command=sys.executable, args=[str(BASE_DIR / "manage.py"), "mcp", "--token-file",
                                                                str(token_file)], env=env, cwd=str(BASE_DIR))

    async def go() -> list[Any]:
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return [await session.call_tool("list_matters", {}),
                        await session.call_tool("search_memory", {"query": "押金 交接照片", "k": 50}),
                        await session.call_tool("search_memory", {"query": "押金", "strategy": "nope"}),
                        await session.call_tool("search_memory", {"k": "ten"})]

    matters, search, strategy, arguments = asyncio.run(go())
    assert [m["id"] for m in data(matters)["matters"]] == [world.matter_laptop.pk]
    assert not set(hit_ids(data(search))) & {str(memory["deposit_fact"].pk), str(memory["deposit_photos"].pk)}
    assert strategy.isError and strategy.content[0].text == (
        "strategy: unknown strategy 'nope'; the strategies are: layered, layered_nav, semantic")
    assert arguments.isError and arguments.content[0].text == (
        "Invalid arguments for search_memory: query is required; k must be a whole number.")
    used = AuditLog.objects.filter(event_type=AuditEvent.TOKEN_USED, extra__via="mcp-stdio").order_by("id")
    assert [(e.extra["outcome"], e.extra.get("reason")) for e in used] == [
        ("ok", None), ("ok", None), ("error", None), ("rejected", "invalid_arguments")]
