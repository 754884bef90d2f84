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

The parts: :mod:`~tests.fake_llm.replies` (scripted replies and injected failures),
:mod:`~tests.fake_llm.handler` (the HTTP server and request handler),
:mod:`~tests.fake_llm.streaming` (SSE), :mod:`~tests.fake_llm.embeddings`,
:mod:`~tests.fake_llm.recording` (the request log) and :mod:`~tests.fake_llm.profiles`; this
module holds :class:`FakeLLMServer`, what a test starts, scripts and asks.

Usage::

    with FakeLLMServer() as fake:
        fake.script(error_reply(500), {"knowledge": []})
        client = openai.OpenAI(base_url=fake.base_url, api_key="x", max_retries=0)
        ...
        assert fake.chat_requests()[-1].response_format_type == "json_schema"
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import deque
from dataclasses import replace
from typing import Any

from .handler import _HTTPServer
from .profiles import PROFILES, ServerProfile
from .recording import RecordedRequest
from .replies import Reply, ReplyLike, as_reply, error_reply, malformed_reply, stall_reply


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
