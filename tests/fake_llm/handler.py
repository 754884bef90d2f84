"""The fake server's HTTP side: a ``ThreadingHTTPServer`` on an ephemeral port that tracks its
open connections (so ``stop`` can close them), and the request handler — connection plumbing
(writes and waits that notice a gone client), routing, OpenAI- / vLLM-style error bodies,
``/v1/models``, ``/v1/chat/completions`` (the JSON answer and the checks of ``response_format``;
the streamed answer is :mod:`tests.fake_llm.streaming`) and ``/v1/embeddings``."""

from __future__ import annotations

import base64
import json
import logging
import select
import socket
import struct
import threading
import time
from collections.abc import Callable, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .embeddings import fake_embedding
from .recording import RecordedRequest
from .replies import Reply
from .streaming import _SSEStreaming

if TYPE_CHECKING:
    from .server import FakeLLMServer

logger = logging.getLogger("tests.fake_llm")

#: How often a waiting handler checks whether its client closed the connection.
DISCONNECT_POLL_SECONDS = 0.005

ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    408: "timeout_error",
    422: "invalid_request_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    502: "server_error",
    503: "server_error",
}

DEFAULT_ERROR_MESSAGES: dict[int, str] = {
    400: "Invalid request.",
    401: "Incorrect API key provided.",
    403: "You are not allowed to use this model.",
    404: "The model does not exist.",
    422: "Unprocessable request.",
    429: "Rate limit reached. Please try again later.",
    500: "The server had an error while processing your request.",
    502: "Bad gateway.",
    503: "The engine is currently overloaded.",
}


class _ClientGone(Exception):
    """The client closed the connection (or the server is stopping)."""


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, fake: FakeLLMServer) -> None:
        self.fake = fake
        self.open_connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        super().__init__((fake.host, 0), _Handler)
        # serve_forever's accept() could block for good when a connection that made the socket
        # readable was gone by then (seen under parallel workers), and stop() waited on it forever;
        # with a timeout the loop comes back and sees the shutdown. Accepted sockets stay blocking.
        self.socket.settimeout(1.0)


class _Handler(_SSEStreaming, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    # -- plumbing ----------------------------------------------------------------------

    def setup(self) -> None:
        super().setup()
        with self.server.connections_lock:
            self.server.open_connections.add(self.connection)

    def handle(self) -> None:
        # A client that resets the connection while we wait for its next
        # keep-alive request is normal (e.g. a cancelled stream), not an error.
        try:
            super().handle()
        except OSError as exc:
            logger.debug("fake LLM: connection ended: %r", exc)

    def finish(self) -> None:
        with self.server.connections_lock:
            self.server.open_connections.discard(self.connection)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        logger.debug("fake LLM: " + format, *args)

    @property
    def fake(self) -> FakeLLMServer:
        return self.server.fake

    def _write(self, data: bytes) -> None:
        if self.fake.stopping.is_set():
            raise _ClientGone
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError) as exc:
            raise _ClientGone from exc

    def _wait(self, seconds: float) -> None:
        """Sleep, but wake up when the server stops or the client closes the connection (a
        real server notices a closed socket; llama.cpp then stops generating)."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            if self.fake.stopping.wait(min(remaining, DISCONNECT_POLL_SECONDS)):
                raise _ClientGone
            if self._client_closed():
                raise _ClientGone

    def _client_closed(self) -> bool:
        """The client closed (or reset) the connection: its socket reads as ended."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            return self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def _send_json(self, status: int, obj: Any, headers: Mapping[str, str] | None = None) -> None:
        data = json.dumps(obj, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self._write(data)

    def _send_error(
        self, status: int, message: str | None = None, *, param: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        text = message or DEFAULT_ERROR_MESSAGES.get(status, f"HTTP {status}")
        if self.fake.server_profile.flat_errors:
            body: dict[str, Any] = {"object": "error", "message": text, "type": "BadRequestError", "param": param,
                                    "code": status}
        else:
            body = {"error": {"message": text, "type": ERROR_TYPES.get(status, "api_error"), "param": param,
                              "code": str(status)}}
        self._send_json(status, body, headers)

    def _handle(self, route: Callable[[RecordedRequest], None], record: RecordedRequest) -> None:
        try:
            route(record)
        except (_ClientGone, OSError):
            record.disconnected = True
            record.disconnected_at = time.monotonic()
            self.close_connection = True
        finally:
            record.ended_at = time.monotonic()
            record.done.set()

    # -- routing -----------------------------------------------------------------------

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        path = urlsplit(self.path).path.rstrip("/")
        record = self.fake._record("GET", path, dict(self.headers.items()), None)
        if path == "/v1/models":
            self._handle(self._models, record)
        else:
            self._handle(lambda r: self._not_found(r), record)

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        path = urlsplit(self.path).path.rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw.decode("utf-8")) if raw else None
        except (UnicodeDecodeError, json.JSONDecodeError):
            body = None
        record = self.fake._record("POST", path, dict(self.headers.items()), body)
        routes = {"/v1/chat/completions": self._chat, "/v1/embeddings": self._embeddings}
        self._handle(routes.get(path, self._not_found), record)

    def _not_found(self, record: RecordedRequest) -> None:
        record.status = 404
        self._send_error(404, f"Unknown path {record.path}")

    def _authorized(self, record: RecordedRequest) -> bool:
        expected = self.fake.api_key
        if expected is None or self.headers.get("Authorization") == f"Bearer {expected}":
            return True
        record.status = 401
        self._send_error(401)
        return False

    def _models(self, record: RecordedRequest) -> None:
        if not self._authorized(record):
            return
        if self.fake.server_profile.interrupt_streams:
            # llama-cpp-python's /v1/models waits for the model lock: a running stream ends.
            self.fake._interrupt_streams()
        record.status = 200
        self._send_json(
            200,
            {"object": "list", "data": [{"id": self.fake.model, "object": "model", "created": 0, "owned_by": "fake"}]},
        )

    def _reply_error(self, record: RecordedRequest, reply: Reply) -> bool:
        """Apply a scripted delay / error; True when the request is answered."""
        self._wait(reply.delay)
        if reply.status >= 400:
            record.status = reply.status
            self._send_error(reply.status, reply.error_message, headers=reply.headers)
            return True
        return False

    def _chat(self, record: RecordedRequest) -> None:
        if not self._authorized(record):
            return
        body = record.body
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list) or not body.get("model"):
            record.status = 400
            self._send_error(400, "Request body must be JSON with 'model' and 'messages'.")
            return
        fmt_type = record.response_format_type
        profile = self.fake.server_profile
        if profile.interrupt_streams:
            self.fake._interrupt_streams()
        if fmt_type == "json_schema" and profile.json_schema_rejection is not None:
            record.status, message = profile.json_schema_rejection
            self._send_error(record.status, message, param="response_format")
            return
        if (fmt_type == "json_schema" and self.fake.reject_json_schema) or (
            fmt_type == "json_object" and self.fake.reject_json_object
        ):
            record.status = 400
            self._send_error(
                400, f"response_format type '{fmt_type}' is not supported by this model.", param="response_format"
            )
            return
        reply = self.fake._shaped_by_profile(self.fake._next_reply("chat"), record)
        record.reply = reply
        if self._reply_error(record, reply):
            return
        record.status = 200
        if record.stream:
            self._chat_stream(record, reply)
        else:
            self._chat_json(record, reply)

    def _completion_base(self, record: RecordedRequest, obj: str) -> dict[str, Any]:
        return {
            "id": f"chatcmpl-fake-{id(record):x}",
            "object": obj,
            "created": int(time.time()),
            "model": record.body.get("model") or self.fake.model,
            "system_fingerprint": "fake",
        }

    def _usage(self, record: RecordedRequest, reply: Reply) -> dict[str, int]:
        prompt = sum(len(str(m.get("content") or "")) for m in record.messages) // 4 + 1
        completion = len(reply.stream_tokens())
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def _chat_json(self, record: RecordedRequest, reply: Reply) -> None:
        payload = self._completion_base(record, "chat.completion")
        payload["choices"] = [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.content},
                "finish_reason": reply.finish_reason,
                "logprobs": None,
            }
        ]
        payload["usage"] = self._usage(record, reply)
        self._send_json(200, payload, reply.headers)

    def _drop_connection(self) -> None:
        """Abort mid-body: the client sees an incomplete chunked response."""
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        raise _ClientGone

    def _embeddings(self, record: RecordedRequest) -> None:
        if not self._authorized(record):
            return
        body = record.body
        if not isinstance(body, dict) or "input" not in body or not body.get("model"):
            record.status = 400
            self._send_error(400, "Request body must be JSON with 'model' and 'input'.")
            return
        reply = self.fake._next_reply("embeddings")
        record.reply = reply
        if self._reply_error(record, reply):
            return
        inputs = body["input"]
        if isinstance(inputs, str) or (isinstance(inputs, list) and inputs and isinstance(inputs[0], int)):
            inputs = [inputs]
        if not isinstance(inputs, list) or not inputs:
            record.status = 400
            self._send_error(400, "'input' must be a non-empty string or array.", param="input")
            return
        dim = int(body.get("dimensions") or self.fake.embedding_dim)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for index, item in enumerate(inputs):
            vector = fake_embedding(item if isinstance(item, str) else json.dumps(item), dim)
            embedding: Any = (
                base64.b64encode(struct.pack(f"<{dim}f", *vector)).decode("ascii") if as_base64 else vector
            )
            data.append({"object": "embedding", "index": index, "embedding": embedding})
        tokens = sum(len(str(i)) for i in inputs) // 4 + 1
        record.status = 200
        self._send_json(
            200,
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
            reply.headers,
        )
