"""A fake OpenAI-compatible HTTP server (real HTTP, SSE, JSON modes, injected
errors) and pytest fixtures for it. See :mod:`tests.fake_llm.server`."""

from .server import (
    FakeLLMServer,
    RecordedRequest,
    Reply,
    error_reply,
    fake_embedding,
    json_reply,
    malformed_reply,
    stall_reply,
    stream_break_reply,
    stream_error_reply,
    stream_stall_reply,
    text_reply,
    tokenize,
)

__all__ = [
    "FakeLLMServer",
    "RecordedRequest",
    "Reply",
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
