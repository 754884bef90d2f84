"""Scripted replies of the fake LLM server: what it answers next, and the failures a test
injects through them (HTTP errors, stalls, malformed JSON, streams that break, stall or send
an error event after N tokens). Queued with :meth:`tests.fake_llm.server.FakeLLMServer.script`;
the handler (:mod:`tests.fake_llm.handler`, :mod:`tests.fake_llm.streaming`) plays them."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


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
