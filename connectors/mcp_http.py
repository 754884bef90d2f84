"""``/mcp``: the MCP server over Streamable HTTP, beside Django in the one ASGI application.

The SDK's ``StreamableHTTPSessionManager`` runs stateless with JSON responses, so any server
process answers any request and each request carries its own ``Authorization: Bearer`` token.
Daphne sends no ASGI lifespan events, so the manager is started by the first request and runs
for the life of the process. Each request is authenticated here, before the SDK sees it: no
token, a wrong, revoked or expired one → 401 (a bad token refused too often, or too many from one
address → 429: `connectors.throttle`), audited.
``/mcp`` does not pass through Django's middleware, so it writes its own request line (the same
``http_request`` event, with the request id sent back in ``X-Request-ID``) and counts itself in
the same HTTP metrics.
"""
from __future__ import annotations

import asyncio
import contextvars
import json
import logging
import time
from typing import Any

import anyio
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.conf import settings
from django.db import close_old_connections
from django.utils import translation
from django.utils.translation import get_supported_language_variant, gettext as _
from django.utils.translation.trans_real import parse_accept_lang_header
from mcp.server.fastmcp import FastMCP
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings

from connectors.authentication import bearer_secret, refusal_message
from connectors.mcp_server import Caller, current_caller
from connectors.selectors import RefusalReason, check_secret
from connectors.services import record_refusal
from infra.http_input import INPUT_MAX_BODY_BYTES
from infra.logs.context import bind, request_id_from
from infra.logs.events import log_event
from infra.logs.requests import REQUEST_ID_HEADER
from infra.metrics import count_request
from infra.text_hygiene import INPUT_MAX_JSON_DEPTH

MCP_PATH = "/mcp"
access_logger = logging.getLogger("legalmem.access")


def is_mcp_path(path: str) -> bool:
    return path in (MCP_PATH, MCP_PATH + "/")


def transport_security() -> TransportSecuritySettings:
    """Host and Origin checks (DNS rebinding) from Django's own ALLOWED_HOSTS and
    CSRF_TRUSTED_ORIGINS; off when ALLOWED_HOSTS holds a wildcard the SDK cannot express."""
    hosts = list(settings.ALLOWED_HOSTS)
    if any(host == "*" or host.startswith(".") for host in hosts):
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    allowed_hosts = [*hosts, *(f"{host}:*" for host in hosts)]
    origins = [*settings.CSRF_TRUSTED_ORIGINS,
               *(f"{scheme}://{host}:*" for host in hosts for scheme in ("http", "https")),
               *(f"{scheme}://{host}" for host in hosts for scheme in ("http", "https"))]
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=allowed_hosts,
                                     allowed_origins=origins)


def _language(headers: dict[str, str]) -> str | None:
    for code, _quality in parse_accept_lang_header(headers.get("accept-language", "")[:200]):
        try:
            return get_supported_language_variant(code)
        except LookupError:
            continue
    return None


async def _refuse(send, status: int, message: str, *, code: int = -32001) -> None:
    """A JSON-RPC error response before the SDK is reached (no token, a refused token or body)."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}},
                      ensure_ascii=False).encode("utf-8")
    headers = [(b"content-type", b"application/json; charset=utf-8"), (b"content-length", str(len(body)).encode())]
    if status == 401:
        headers.append((b"www-authenticate", b'Bearer realm="mcp"'))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyRefused(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def _too_deep(data: Any, limit: int) -> bool:
    """Whether a decoded JSON value is nested more than ``limit`` levels (iterative)."""
    stack = [(data, 0)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            if depth >= limit:
                return True
            stack.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))
    return False


async def _buffered_body(receive) -> bytes:
    """The whole request body, refused when larger than INPUT_MAX_BODY_BYTES (413) or nested
    deeper than INPUT_MAX_JSON_DEPTH (400): the API bodies' limits (docs/hardening-input.md).
    Malformed JSON is left to the SDK, which answers it with a JSON-RPC parse error."""
    limit = INPUT_MAX_BODY_BYTES
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyRefused(413, _("The request body is larger than %(limit)d bytes.") % {"limit": limit})
        chunks.append(chunk)
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    try:
        data = json.loads(body)
    except RecursionError:
        data = None
        too_deep = True
    except ValueError:
        return body
    else:
        too_deep = _too_deep(data, INPUT_MAX_JSON_DEPTH)
    if too_deep:
        raise BodyRefused(400, _("The request is nested more than %(limit)d levels deep.") % {
            "limit": INPUT_MAX_JSON_DEPTH})
    return body


def _replay(body: bytes, receive):
    """A ``receive`` that hands the buffered body to the SDK, then waits for the client as before."""
    sent = False

    async def replay() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class McpEndpoint:
    """The ASGI application behind ``/mcp``."""

    def __init__(self, server: FastMCP) -> None:
        self.server = server
        self.manager: StreamableHTTPSessionManager | None = None
        self._started: asyncio.Event | None = None
        self._runner: asyncio.Task | None = None  # kept: the loop holds tasks only weakly

    async def _running_manager(self) -> StreamableHTTPSessionManager:
        """The process's one session manager, started on first use and kept running."""
        if self._started is None:
            self._started = asyncio.Event()
            self.manager = StreamableHTTPSessionManager(
                app=self.server._mcp_server,  # FastMCP's low-level server (what streamable_http_app() wraps)
                json_response=True, stateless=True, security_settings=transport_security(),
                max_request_body_size=INPUT_MAX_BODY_BYTES,
            )
            started = self._started
            manager = self.manager

            async def run_forever() -> None:
                async with manager.run():
                    started.set()
                    await anyio.sleep_forever()

            # a fresh context: nothing of this first request (its caller) is inherited
            self._runner = asyncio.get_running_loop().create_task(run_forever(), context=contextvars.Context())
        await self._started.wait()
        assert self.manager is not None
        return self.manager

    async def __call__(self, scope: dict[str, Any], receive, send) -> None:
        if scope["type"] != "http":
            return
        headers = {key.decode("latin-1").lower(): value.decode("latin-1") for key, value in scope.get("headers", [])}
        served = ServedRequest(scope, request_id_from(headers.get(REQUEST_ID_HEADER.lower())))
        with bind(request_id=served.request_id):
            try:
                await self._serve(scope, receive, served.sending(send), headers, served)
            finally:
                served.log()

    async def _serve(self, scope: dict[str, Any], receive, send, headers: dict[str, str], served: "ServedRequest") -> None:
        manager = await self._running_manager()
        address = (scope.get("client") or (None,))[0]
        secret = bearer_secret(headers.get("authorization", ""))
        async with ThreadSensitiveContext():  # this request's ORM work on its own thread, as Django does
            try:
                asked = _language(headers)
                if not secret:
                    with translation.override(asked or settings.LANGUAGE_CODE):
                        message = _("An access token is required: Authorization: Bearer <token>.")
                    await _refuse(send, 401, message)
                    return
                check = await sync_to_async(check_secret)(secret, ip_address=address)
                if not check.ok:
                    await sync_to_async(record_refusal)(check, via="mcp", ip_address=address, path=MCP_PATH)
                    status = 429 if check.refused == RefusalReason.THROTTLED else 401
                    with translation.override(check.token.answer_language(asked) if check.token else
                                              asked or settings.LANGUAGE_CODE):
                        message = refusal_message(check.refused)
                    await _refuse(send, status, message)
                    return
                language = check.token.answer_language(asked)
                if scope.get("method") == "POST":
                    try:
                        with translation.override(language):
                            receive = _replay(await _buffered_body(receive), receive)
                    except BodyRefused as refused:
                        await _refuse(send, refused.status, refused.message, code=-32600)
                        return
                served.user_id, served.firm_id = check.token.user_id, check.token.firm_id
                reset = current_caller.set(Caller(check.token, address, language))
                try:
                    await manager.handle_request(scope, receive, send)
                finally:
                    current_caller.reset(reset)
            finally:
                await sync_to_async(close_old_connections)()


class ServedRequest:
    """One ``/mcp`` request's line in the request log and its count in the HTTP metrics: what
    Django's ``RequestLogMiddleware`` and ``RequestMetricsMiddleware`` do for every other path."""

    def __init__(self, scope: dict[str, Any], request_id: str) -> None:
        self.method = str(scope.get("method", ""))
        self.path = str(scope.get("path", ""))
        self.request_id = request_id
        self.status = 500  # no response started: the endpoint failed
        self.user_id: int | None = None
        self.firm_id: int | None = None
        self.started = time.perf_counter()

    def sending(self, send):
        """``send`` that notes the status and adds the request id to the response headers."""
        async def send_noted(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                self.status = message["status"]
                message = {**message, "headers": [*message.get("headers", []),
                                                  (REQUEST_ID_HEADER.lower().encode(), self.request_id.encode())]}
            await send(message)
        return send_noted

    def log(self) -> None:
        seconds = time.perf_counter() - self.started
        count_request(self.method, self.status, seconds)
        log_event(
            access_logger, "http_request", level=logging.ERROR if self.status >= 500 else logging.INFO,
            method=self.method, path=self.path, route="mcp", status=self.status,
            duration_ms=round(seconds * 1000, 1), user_id=self.user_id,
            firm_ids=[self.firm_id] if self.firm_id is not None else None,
        )


class WithMcp:
    """The site's ASGI HTTP application with ``/mcp`` in front of Django."""

    def __init__(self, django_app, endpoint: McpEndpoint) -> None:
        self.django_app = django_app
        self.endpoint = endpoint

    async def __call__(self, scope: dict[str, Any], receive, send) -> None:
        if scope["type"] == "http" and is_mcp_path(scope.get("path", "")):
            await self.endpoint(scope, receive, send)
        else:
            await self.django_app(scope, receive, send)


def with_mcp(django_app) -> WithMcp:
    """Wrap Django's ASGI application so ``/mcp`` reaches the MCP server."""
    from connectors.mcp_server import server

    return WithMcp(django_app, McpEndpoint(server))
