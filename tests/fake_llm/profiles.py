"""Server profiles of the fake OpenAI-compatible server: how the servers firms actually run
differ from OpenAI in the ways that break clients.

Each profile is observed behaviour, not a guess about internals:

* ``openai``   — the reference: ``json_schema`` enforced, every stream ends with a finish reason.
* ``deepseek`` — no ``json_schema``: HTTP 400 "This response_format type is unavailable now";
  ``json_object`` works (the prompt must say JSON).
* ``vllm``     — ``json_schema`` through guided decoding; errors have vLLM's flat body
  (``{"object": "error", "message": ..., "code": 400}``); streams end with a usage chunk.
* ``ollama``   — accepts ``json_schema`` but small models still wrap JSON in a markdown fence.
* ``llamacpp`` — llama-cpp-python 0.3.x: ``json_schema`` fails its request validator with
  HTTP **500** naming ``response_format``; in ``json_object`` mode the model echoes the schema
  around every other reply (``{"type": "object", "properties": {...data...}}``); a request
  arriving while a stream runs — a completion, or ``GET /v1/models``, which waits for the model
  lock there — ends that stream with ``data: [DONE]`` and no finish reason.

Two more play a llama.cpp server on a loaded CPU (they behave as ``llamacpp`` otherwise) and
are not in the matrix of :data:`PROFILE_NAMES`:

* ``slow``  — every streamed token comes ``FakeLLMServer.slow_token_seconds`` after the last
  (a slow server that is still making progress).
* ``stall`` — a stream stops after ``FakeLLMServer.stall_after_tokens`` tokens without ending:
  only SSE keep-alive comments (``: ping``, every ``ping_seconds``, as llama-cpp-python's
  server sends them) until the client closes the connection.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerProfile:
    name: str
    #: (status, message) answered to a ``json_schema`` request, or None when it is accepted.
    json_schema_rejection: tuple[int, str] | None = None
    #: Wrap every n-th JSON reply of a json_object / plain request in an echoed schema (0 = never).
    echo_schema_every: int = 0
    #: Wrap JSON replies in a ```json fence.
    fence_json: bool = False
    #: A new request ends running streams with ``[DONE]`` and no finish reason.
    interrupt_streams: bool = False
    #: Error bodies in vLLM's flat form instead of OpenAI's ``{"error": {...}}``.
    flat_errors: bool = False
    #: Always send a usage chunk before ``[DONE]``.
    usage_chunk: bool = False
    #: Streamed tokens come ``FakeLLMServer.slow_token_seconds`` apart.
    slow_tokens: bool = False
    #: Streams go silent (keep-alive comments only) after ``FakeLLMServer.stall_after_tokens`` tokens.
    stalls: bool = False


#: The error message llama-cpp-python 0.3.36 really sends with its HTTP 500 (its type is
#: ``internal_server_error``; the traceback line is part of the message).
LLAMACPP_SCHEMA_ERROR = (
    "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', 'type'), "
    "'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
    "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"llama_cpp/server/app.py\", line 376, "
    "in create_chat_completion\n    POST /v1/chat/completions"
)

PROFILES: dict[str, ServerProfile] = {
    "openai": ServerProfile("openai"),
    "deepseek": ServerProfile("deepseek", json_schema_rejection=(400, "This response_format type is unavailable now")),
    "vllm": ServerProfile("vllm", flat_errors=True, usage_chunk=True),
    "ollama": ServerProfile("ollama", fence_json=True),
    "llamacpp": ServerProfile(
        "llamacpp", json_schema_rejection=(500, LLAMACPP_SCHEMA_ERROR), echo_schema_every=2, interrupt_streams=True
    ),
}

#: Profile names in the order the matrix runs them (the five servers).
PROFILE_NAMES: tuple[str, ...] = tuple(PROFILES)

#: A slow llama.cpp server: behaves as ``llamacpp``, tokens slow (``slow``) or stopping (``stall``).
PROFILES["slow"] = ServerProfile(
    "slow", json_schema_rejection=(500, LLAMACPP_SCHEMA_ERROR), echo_schema_every=2, interrupt_streams=True,
    slow_tokens=True,
)
PROFILES["stall"] = ServerProfile(
    "stall", json_schema_rejection=(500, LLAMACPP_SCHEMA_ERROR), interrupt_streams=True, stalls=True,
)
