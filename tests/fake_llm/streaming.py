"""SSE streaming of a chat completion: ``data: {...}`` chunks (one token each, then a finish
reason, a usage chunk, ``data: [DONE]``) over HTTP/1.1 chunked transfer, with the scripted
stream failures (break, error event, stall) and the profiles' stream quirks (llama.cpp's
interrupted streams, slow tokens, silent stalls with keep-alive pings).

A mixin of the request handler (:class:`tests.fake_llm.handler._Handler`): it uses the
handler's plumbing (``fake``, ``_write``, ``_wait``, ``_drop_connection``, ``_completion_base``,
``_usage``)."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

from .recording import RecordedRequest
from .replies import Reply


class _SSEStreaming:
    """The streamed answer of ``POST /v1/chat/completions`` with ``"stream": true``."""

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
