"""``/mcp`` skips Django's middleware, yet an administrator reads its requests in the same request
log and HTTP metrics as every other path: one ``http_request`` line with the request id (also sent
back in ``X-Request-ID``), the token's user and firm once the token is accepted, never the body."""
from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from connectors.mcp_http import McpEndpoint, WithMcp
from connectors.mcp_server import server
from tests.connectors.conftest import make_token
from tests.site.test_metrics import sample
from tests.site.test_structured_logs import GENERATED_ID, json_log  # noqa: F401 — the log lines fixture

pytestmark = pytest.mark.django_db(transaction=True)  # the endpoint reads the token on its own thread

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}


async def django_app(scope, receive, send) -> None:  # never reached: every request here is /mcp
    raise AssertionError(f"{scope['path']} went to Django")


def post_all(requests: list[dict[str, str]]) -> list[httpx.Response]:
    """POST ``initialize`` to /mcp once per header set, through the site's ASGI wrapper."""
    async def go() -> list[httpx.Response]:
        app = WithMcp(django_app, McpEndpoint(server))
        transport = httpx.ASGITransport(app=app, client=("127.0.0.1", 50000))
        async with httpx.AsyncClient(transport=transport, base_url="http://localhost") as client:
            return [await client.post("/mcp", json=INITIALIZE, headers={
                "Accept": "application/json, text/event-stream", **headers}) for headers in requests]
    return asyncio.run(go())


def test_each_mcp_request_gets_a_request_line_and_is_counted(world, json_log, settings):  # noqa: F811
    settings.ALLOWED_HOSTS = ["localhost"]
    alice = make_token(world.alice)
    charlie = make_token(world.charlie)
    accepted_before = sample("legalmem_http_requests_total", method="POST", status="2xx")
    refused_before = sample("legalmem_http_requests_total", method="POST", status="4xx")
    accepted, refused, outsider = post_all([
        {"Authorization": f"Bearer {alice.secret}", "X-Request-ID": "proxy-id-7"},
        {"Authorization": "Bearer lm_not_a_real_token"},
        {"Authorization": f"Bearer {charlie.secret}", "X-Request-ID": "bad id with spaces"},
    ])
    assert (accepted.status_code, refused.status_code, outsider.status_code) == (200, 401, 200)
    assert accepted.headers["X-Request-ID"] == "proxy-id-7"
    assert GENERATED_ID.fullmatch(refused.headers["X-Request-ID"])
    assert GENERATED_ID.fullmatch(outsider.headers["X-Request-ID"])
    lines = {line["request_id"]: line for line in json_log() if line.get("event") == "http_request"}
    assert set(lines) == {"proxy-id-7", refused.headers["X-Request-ID"], outsider.headers["X-Request-ID"]}
    mine = lines["proxy-id-7"]
    assert (mine["method"], mine["path"], mine["route"], mine["status"]) == ("POST", "/mcp", "mcp", 200)
    assert (mine["user_id"], mine["firm_ids"]) == (world.alice.pk, [world.firm_a.pk])
    assert mine["duration_ms"] >= 0
    theirs = lines[outsider.headers["X-Request-ID"]]
    assert (theirs["user_id"], theirs["firm_ids"]) == (world.charlie.pk, [world.firm_b.pk])
    nobody = lines[refused.headers["X-Request-ID"]]
    assert nobody["status"] == 401 and "user_id" not in nobody and "firm_ids" not in nobody
    assert sample("legalmem_http_requests_total", method="POST", status="2xx") == accepted_before + 2
    assert sample("legalmem_http_requests_total", method="POST", status="4xx") == refused_before + 1
    everything = json.dumps(json_log(), ensure_ascii=False)
    assert "clientInfo" not in everything and alice.secret not in everything
