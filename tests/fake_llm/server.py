"""A fake OpenAI-compatible HTTP server for tests.

Real HTTP on 127.0.0.1 (ephemeral port) served from a background thread with
``http.server.ThreadingHTTPServer`` — the code under test talks to it through
the real ``openai`` package, exactly as it would to vLLM or DeepSeek, so
timeouts, SSE parsing, connection closing and retries are exercised for real
(the tests never mock the client).

Endpoints:

* ``POST /v1/chat/completions`` — JSON or, with ``"stream": true``, SSE
  (``data: {...}\\n\\n`` chunks, one token per chunk, then ``data: [DONE]``)
  over HTTP/1.1 chunked transfer, so a dropped stream is a real protocol error.
* ``POST /v1/embeddings`` — deterministic feature-hashing vectors (texts that
  share words / Chinese characters get similar vectors), float or base64.
* ``GET /v1/models``.

Scripting (thread-safe): queue replies with :meth:`FakeLLMServer.script` (text,
a dict/list returned as JSON content, or a :class:`Reply` built by the helpers
below: HTTP errors, stalls, malformed JSON, streams that break / stall / send
an error event after N tokens). When the queue is empty ``default_reply`` is
used. ``reject_json_schema`` / ``reject_json_object`` answer 400 to those
``response_format`` types without consuming the queue. ``profile`` makes the fake
behave like a given server (openai, deepseek, vllm, ollama, llamacpp; and ``slow`` /
``stall``, a llama.cpp server whose tokens come slowly / stop coming; see
:mod:`tests.fake_llm.profiles`). Every request is
recorded (:attr:`FakeLLMServer.requests`) with its parsed body and what
happened to it (status, chunks sent and when, whether and when the client disconnected —
a waiting or stalled handler notices a closed connection within a few milliseconds, as
llama.cpp does — and when the handler ended).

Usage::

    with FakeLLMServer() as fake:
        fake.script(error_reply(500), {"knowledge": []})
        client = openai.OpenAI(base_url=fake.base_url, api_key="x", max_retries=0)
        ...
        assert fake.chat_requests()[-1].response_format_type == "json_schema"
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import re
import select
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .profiles import PROFILES, ServerProfile

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


# --------------------------------------------------------------------------
# Scripted replies
# --------------------------------------------------------------------------


@dataclass
class Reply:
    """One scripted answer of the fake server.

    content         reply text (message content / streamed tokens)
    status          HTTP status; >= 400 sends an OpenAI-style error body
    error_message   message of that error body
    delay           seconds to wait before answering (a stall when longer than
                    the client timeout); ends early when the server stops
    tokens          explicit split of ``content`` for streaming
    token_delay     seconds between streamed chunks (default: server's)
    break_after     stream: drop the connection after N tokens (protocol error)
    error_after     stream: send an SSE error event after N tokens, then end
    stall_after     stream: stop sending for ``stall_seconds`` after N tokens
    finish_reason   finish_reason of the completion (None: a stream ends without one)
    headers         extra response headers (e.g. {"retry-after": "0"})
    """

    content: str | None = "Hello from the fake LLM."
    status: int = 200
    error_message: str | None = None
    delay: float = 0.0
    tokens: list[str] | None = None
    token_delay: float | None = None
    break_after: int | None = None
    error_after: int | None = None
    stall_after: int | None = None
    stall_seconds: float = 0.0
    finish_reason: str | None = "stop"
    headers: dict[str, str] = field(default_factory=dict)

    def stream_tokens(self) -> list[str]:
        """The chunks a streamed answer sends (they join to ``content``)."""
        if self.tokens is not None:
            return list(self.tokens)
        return tokenize(self.content or "")


def text_reply(text: str, **options: Any) -> Reply:
    """Answer with ``text``."""
    return Reply(content=text, **options)


def json_reply(obj: Any, **options: Any) -> Reply:
    """Answer with ``obj`` serialized as the message content."""
    return Reply(content=json.dumps(obj, ensure_ascii=False), **options)


def error_reply(status: int, message: str | None = None, **options: Any) -> Reply:
    """Answer with an HTTP error and an OpenAI-style error body."""
    return Reply(content=None, status=status, error_message=message, **options)


def stall_reply(seconds: float, text: str = "too late", **options: Any) -> Reply:
    """Wait ``seconds`` before answering (use more than the client timeout)."""
    return Reply(content=text, delay=seconds, **options)


def malformed_reply(raw: str = '{"knowledge": [{"content": "合同于2023年签订", "categ', **options: Any) -> Reply:
    """Answer with content that is not valid JSON (truncated by default)."""
    return Reply(content=raw, **options)


def stream_break_reply(text: str, after: int, **options: Any) -> Reply:
    """Streamed: send ``after`` tokens then drop the connection mid-body."""
    return Reply(content=text, break_after=after, **options)


def stream_error_reply(text: str, after: int, message: str = "The model crashed.", **options: Any) -> Reply:
    """Streamed: send ``after`` tokens then an SSE ``{"error": ...}`` event."""
    return Reply(content=text, error_after=after, error_message=message, **options)


def stream_stall_reply(text: str, after: int, seconds: float, **options: Any) -> Reply:
    """Streamed: send ``after`` tokens then go silent for ``seconds``."""
    return Reply(content=text, stall_after=after, stall_seconds=seconds, **options)


ReplyLike = Reply | str | Mapping[str, Any] | list[Any]


def as_reply(value: ReplyLike) -> Reply:
    """str → text reply; dict / list → JSON content; Reply → itself."""
    if isinstance(value, Reply):
        return value
    if isinstance(value, str):
        return text_reply(value)
    if isinstance(value, (Mapping, list)):
        return json_reply(value if isinstance(value, list) else dict(value))
    raise TypeError(f"cannot script a reply from {type(value).__name__}")


_TOKEN_RE = re.compile(r"\s*(?:[A-Za-z0-9_]+|\S)|\s+\Z")


def tokenize(text: str) -> list[str]:
    """Split text into stream tokens: an English word or a single other
    character (each Chinese character is one token), with the whitespace
    before it. ``"".join(tokenize(t)) == t``."""
    tokens = _TOKEN_RE.findall(text)
    return tokens if "".join(tokens) == text else list(text)


# --------------------------------------------------------------------------
# Embeddings
# --------------------------------------------------------------------------

_FEATURE_RE = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]")


def fake_embedding(text: str, dim: int) -> list[float]:
    """Deterministic unit vector for ``text``: feature hashing of lower-cased
    words, Chinese characters and Chinese character bigrams, so texts that
    share vocabulary are closer. Texts without features get a pure hash vector."""
    pieces = _FEATURE_RE.findall(text.lower())
    features = list(pieces)
    features += [a + b for a, b in zip(pieces, pieces[1:]) if len(a) == 1 and len(b) == 1]
    vec = [0.0] * dim
    for feature in features:
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
        index = int.from_bytes(digest[:4], "little") % dim
        vec[index] += 1.0 if digest[4] & 1 else -1.0
    if not any(vec):
        seed = hashlib.sha256(text.encode("utf-8")).digest()
        for i in range(dim):
            byte = seed[i % len(seed)] ^ (i * 131 % 256)
            vec[i] = byte / 127.5 - 1.0
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


# --------------------------------------------------------------------------
# Request log
# --------------------------------------------------------------------------


@dataclass
class RecordedRequest:
    """One request as the fake server received it, and what it did with it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any
    status: int | None = None
    chunks_sent: int = 0
    disconnected: bool = False
    interrupted: bool = False  # a llamacpp-profile stream cut short by a later request
    reply: Reply | None = None
    done: threading.Event = field(default_factory=threading.Event, repr=False)
    #: ``time.monotonic()`` when the request arrived, when its handler ended (the server
    #: stopped "generating"), and when the client was seen to have gone.
    received_at: float = field(default_factory=time.monotonic)
    ended_at: float | None = None
    disconnected_at: float | None = None
    #: ``time.monotonic()`` of every streamed token sent.
    token_times: list[float] = field(default_factory=list, repr=False)

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or []) if isinstance(self.body, dict) else []

    @property
    def stream(self) -> bool:
        return bool(isinstance(self.body, dict) and self.body.get("stream"))

    @property
    def response_format(self) -> dict[str, Any] | None:
        fmt = self.body.get("response_format") if isinstance(self.body, dict) else None
        return fmt if isinstance(fmt, dict) else None

    @property
    def response_format_type(self) -> str | None:
        """"json_schema", "json_object", "text" or None (no response_format)."""
        fmt = self.response_format
        return fmt.get("type") if fmt else None

    @property
    def user_content(self) -> str:
        """Content of the last user message ('' if none)."""
        for message in reversed(self.messages):
            if message.get("role") == "user":
                content = message.get("content")
                return content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        return ""

    @property
    def system_content(self) -> str:
        for message in self.messages:
            if message.get("role") == "system":
                content = message.get("content")
                return content if isinstance(content, str) else ""
        return ""


# --------------------------------------------------------------------------
# HTTP
# --------------------------------------------------------------------------


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


class _Handler(BaseHTTPRequestHandler):
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

    def _sse(self, data: str) -> None:
        event = f"data: {data}\n\n".encode("utf-8")
        self._write(b"%x\r\n%s\r\n" % (len(event), event))

    def _chunk(self, record: RecordedRequest, delta: dict[str, Any], finish: str | None = None) -> str:
        payload = self._completion_base(record, "chat.completion.chunk")
        payload["choices"] = [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]
        return json.dumps(payload, ensure_ascii=False)

    def _chat_stream(self, record: RecordedRequest, reply: Reply) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        delay = self.fake.token_delay if reply.token_delay is None else reply.token_delay
        interrupted = self.fake._stream_started()
        try:
            self._stream_tokens(record, reply, delay, interrupted)
        finally:
            self.fake._stream_ended(interrupted)

    def _stream_tokens(self, record: RecordedRequest, reply: Reply, delay: float, interrupted: threading.Event) -> None:
        self._sse(self._chunk(record, {"role": "assistant", "content": ""}))
        profile = self.fake.server_profile
        if profile.slow_tokens:
            delay = self.fake.slow_token_seconds
        for index, token in enumerate(reply.stream_tokens()):
            if profile.stalls and index == self.fake.stall_after_tokens:
                self._stall_forever()
            if interrupted.is_set():
                # llama.cpp: another request arrived; the stream just ends, no finish reason.
                record.interrupted = True
                self._sse("[DONE]")
                self._end_chunked()
                return
            if reply.break_after is not None and index >= reply.break_after:
                self._drop_connection()
            if reply.error_after is not None and index >= reply.error_after:
                self._sse(json.dumps({"error": {"message": reply.error_message or "stream error",
                                                 "type": "server_error", "param": None, "code": "500"}}))
                self._end_chunked()
                return
            if reply.stall_after is not None and index == reply.stall_after:
                self._wait(reply.stall_seconds)
            if index:
                self._wait(delay)
            self._sse(self._chunk(record, {"content": token}))
            record.chunks_sent += 1
            record.token_times.append(time.monotonic())
        if reply.finish_reason is not None:
            self._sse(self._chunk(record, {}, reply.finish_reason))
        options = record.body.get("stream_options") or {}
        if self.fake.server_profile.usage_chunk or (isinstance(options, dict) and options.get("include_usage")):
            usage = self._completion_base(record, "chat.completion.chunk")
            usage.update(choices=[], usage=self._usage(record, reply))
            self._sse(json.dumps(usage))
        self._sse("[DONE]")
        self._end_chunked()

    def _stall_forever(self) -> None:
        """The ``stall`` profile: no more tokens, only keep-alive comments, until the client
        closes the connection (or the server stops) — the handler never ends on its own."""
        while True:
            self._wait(self.fake.ping_seconds)
            event = b": ping\n\n"
            self._write(b"%x\r\n%s\r\n" % (len(event), event))

    def _end_chunked(self) -> None:
        self._write(b"0\r\n\r\n")

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


# --------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------


class FakeLLMServer:
    """Scriptable OpenAI-compatible server on 127.0.0.1 for tests.

    ``reject_json_schema`` / ``reject_json_object``, ``token_delay``,
    ``embedding_dim``, ``api_key`` (None = accept any) and ``model`` can be
    changed while it runs; so can the timing of the ``slow`` and ``stall`` profiles:
    ``slow_token_seconds`` (between tokens), ``stall_after_tokens`` (tokens before a stream
    goes silent) and ``ping_seconds`` (between keep-alive comments while it is silent).
    """

    def __init__(
        self,
        *,
        model: str = "fake-model",
        default_reply: ReplyLike = "Hello from the fake LLM.",
        token_delay: float = 0.0,
        embedding_dim: int = 64,
        api_key: str | None = None,
        reject_json_schema: bool = False,
        reject_json_object: bool = False,
        host: str = "127.0.0.1",
        profile: str = "openai",
        slow_token_seconds: float = 0.05,
        stall_after_tokens: int = 3,
        ping_seconds: float = 0.1,
    ) -> None:
        self.model = model
        self.token_delay = token_delay
        self.embedding_dim = embedding_dim
        self.api_key = api_key
        self.reject_json_schema = reject_json_schema
        self.reject_json_object = reject_json_object
        self.host = host
        self.profile = profile
        self.slow_token_seconds = slow_token_seconds
        self.stall_after_tokens = stall_after_tokens
        self.ping_seconds = ping_seconds
        self._json_replies = 0
        self._streams: set[threading.Event] = set()
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._default: Reply = as_reply(default_reply)
        self._queues: dict[str, deque[Reply]] = {"chat": deque(), "embeddings": deque()}
        self._requests: list[RecordedRequest] = []
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        """Bind an ephemeral port and serve from a daemon thread."""
        if self._httpd is not None:
            raise RuntimeError("fake LLM server already started")
        self.stopping.clear()
        self._httpd = _HTTPServer(self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving, wake stalled handlers and close open connections."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self.stopping.set()
        httpd.shutdown()
        with httpd.connections_lock:
            connections = list(httpd.open_connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("fake LLM server not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``"""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as ``base_url``: ``http://127.0.0.1:<port>/v1``."""
        return self.url + "/v1"

    # -- scripting ---------------------------------------------------------------------

    def script(self, *replies: ReplyLike, endpoint: str = "chat") -> None:
        """Queue replies for the next requests to ``endpoint`` ("chat" or
        "embeddings"), in order. str → text, dict/list → JSON content, or a
        :class:`Reply` (see the ``*_reply`` helpers). For embeddings only
        ``status``, ``error_message``, ``delay`` and ``headers`` matter."""
        if endpoint not in self._queues:
            raise ValueError(f"unknown endpoint {endpoint!r}")
        with self._lock:
            self._queues[endpoint].extend(as_reply(r) for r in replies)

    def script_error(self, status: int, message: str | None = None, *, times: int = 1, endpoint: str = "chat") -> None:
        """Queue ``times`` HTTP errors (429, 500, 400, 401, ...)."""
        self.script(*(error_reply(status, message) for _ in range(times)), endpoint=endpoint)

    def script_stall(self, seconds: float, *, times: int = 1, endpoint: str = "chat") -> None:
        """Queue ``times`` replies that wait ``seconds`` before answering."""
        self.script(*(stall_reply(seconds) for _ in range(times)), endpoint=endpoint)

    def script_malformed(self, raw: str | None = None, *, times: int = 1) -> None:
        """Queue ``times`` chat replies whose content is not valid JSON."""
        self.script(*(malformed_reply() if raw is None else malformed_reply(raw) for _ in range(times)))

    def set_default(self, reply: ReplyLike) -> None:
        """The reply used when the chat queue is empty."""
        with self._lock:
            self._default = as_reply(reply)

    def pending(self, endpoint: str = "chat") -> int:
        """How many scripted replies are still queued."""
        with self._lock:
            return len(self._queues[endpoint])

    def reset(self) -> None:
        """Forget scripted replies, recorded requests and rejection flags."""
        with self._lock:
            for queue in self._queues.values():
                queue.clear()
            self._requests.clear()
        self.reject_json_schema = False
        self.reject_json_object = False

    # -- server profiles -----------------------------------------------------------------

    @property
    def server_profile(self) -> ServerProfile:
        """The behaviour of the server this fake plays (``profile``: openai, deepseek, vllm,
        ollama, llamacpp — see :mod:`tests.fake_llm.profiles`)."""
        return PROFILES[self.profile]

    def _shaped_by_profile(self, reply: Reply, record: RecordedRequest) -> Reply:
        """A JSON reply as this profile's server would send it: fenced, or wrapped in an
        echoed schema (every n-th reply to a json_object / plain JSON request)."""
        profile = self.server_profile
        if reply.status >= 400 or not reply.content or record.response_format_type == "json_schema":
            return reply
        try:
            data = json.loads(reply.content)
        except ValueError:
            return reply
        if not isinstance(data, dict):
            return reply
        content = reply.content
        if profile.echo_schema_every:
            with self._lock:
                self._json_replies += 1
                echo = (self._json_replies - 1) % profile.echo_schema_every == 0
            if echo:
                content = json.dumps({"type": "object", "properties": data}, ensure_ascii=False)
        if profile.fence_json:
            content = "```json\n" + content + "\n```"
        return replace(reply, content=content, tokens=None) if content != reply.content else reply

    def _stream_started(self) -> threading.Event:
        interrupted = threading.Event()
        with self._lock:
            self._streams.add(interrupted)
        return interrupted

    def _stream_ended(self, interrupted: threading.Event) -> None:
        with self._lock:
            self._streams.discard(interrupted)

    def _interrupt_streams(self) -> None:
        """llama.cpp: a new request ends every running stream."""
        with self._lock:
            streams = list(self._streams)
        for interrupted in streams:
            interrupted.set()

    def _next_reply(self, endpoint: str) -> Reply:
        with self._lock:
            queue = self._queues[endpoint]
            if queue:
                return queue.popleft()
            return self._default if endpoint == "chat" else Reply()

    # -- request log ---------------------------------------------------------------------

    def _record(self, method: str, path: str, headers: dict[str, str], body: Any) -> RecordedRequest:
        record = RecordedRequest(
            method=method, path=path, headers={k.lower(): v for k, v in headers.items()}, body=body
        )
        with self._lock:
            self._requests.append(record)
        return record

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    def generating(self) -> list[RecordedRequest]:
        """Chat requests whose handler still runs: what a llama.cpp server would still be
        generating."""
        return [r for r in self.chat_requests() if not r.done.is_set()]

    def chat_requests(self) -> list[RecordedRequest]:
        """Requests to ``/v1/chat/completions``."""
        return [r for r in self.requests if r.path == "/v1/chat/completions"]

    def embedding_requests(self) -> list[RecordedRequest]:
        """Requests to ``/v1/embeddings``."""
        return [r for r in self.requests if r.path == "/v1/embeddings"]

    def wait_for_requests(self, count: int, timeout: float = 5.0, *, done: bool = True) -> list[RecordedRequest]:
        """Wait until ``count`` requests arrived (and, with ``done``, were
        fully handled); returns them. Raises TimeoutError otherwise."""
        deadline = time.monotonic() + timeout
        while True:
            requests = self.requests
            if len(requests) >= count:
                remaining = max(0.0, deadline - time.monotonic())
                if not done or all(r.done.wait(remaining) for r in requests[:count]):
                    return requests
            if time.monotonic() >= deadline:
                raise TimeoutError(f"expected {count} requests, got {len(requests)}")
            time.sleep(0.005)


__all__ = [
    "FakeLLMServer",
    "RecordedRequest",
    "Reply",
    "as_reply",
    "error_reply",
    "fake_embedding",
    "json_reply",
    "malformed_reply",
    "stall_reply",
    "stream_break_reply",
    "stream_error_reply",
    "stream_stall_reply",
    "text_reply",
    "tokenize",
]
