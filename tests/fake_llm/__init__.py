"""A fake OpenAI-compatible HTTP server (real HTTP, SSE, JSON modes, injected
errors) and pytest fixtures for it. See :mod:`tests.fake_llm.server`."""

from .embeddings import fake_embedding
from .recording import RecordedRequest
from .replies import (
    Reply,
    error_reply,
    json_reply,
    malformed_reply,
    stall_reply,
    stream_break_reply,
    stream_error_reply,
    stream_stall_reply,
    text_reply,
    tokenize,
)
from .server import FakeLLMServer

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
