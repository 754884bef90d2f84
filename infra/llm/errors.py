"""Errors raised by the LLM client.

The client translates every failure of the ``openai`` package (HTTP status,
timeout, connection, unparsable output) into one of these, so callers — the
chat consumer, the extraction jobs, the admin — handle four cases and never
depend on ``openai`` internals. Messages are written to be shown to a user or
an administrator as they are; they never contain the API key.
"""

from __future__ import annotations


class LLMError(Exception):
    """Base class of every error raised by :mod:`infra.llm`."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class LLMUnavailable(LLMError):
    """The server could not be reached or kept failing (timeouts, connection
    errors, 429 rate limits, 5xx) after all retries. Transient: try later."""

    def __init__(self, message: str, *, attempts: int = 0, status_code: int | None = None) -> None:
        super().__init__(message)
        self.attempts = attempts
        self.status_code = status_code


class LLMBadOutput(LLMError):
    """The server answered, but not with what was asked for (invalid JSON, not
    an object, or not matching the schema) after all retries.

    ``raw`` holds the last raw reply (truncated) for the job log / admin.
    """

    def __init__(self, message: str, *, raw: str = "", problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.problems = list(problems or [])


class LLMRejected(LLMError):
    """The server refused the request with a 4xx status that retrying cannot
    fix (401 bad key, 403, 404 unknown model, 400 invalid request ...).
    Usually a configuration problem for an administrator."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class LLMFormatRejected(LLMRejected):
    """The server refused the requested ``response_format`` (any 400/422, or an error
    whose body names the format — llama-cpp-python answers ``json_schema`` with HTTP 500).
    Permanent for that server: the client falls back to the next JSON mode at once."""


class LLMStreamIncomplete(LLMUnavailable):
    """A streamed answer ended without a finish reason (llama.cpp ends a stream with
    ``[DONE]`` when another request arrives). The text received so far is not an answer.
    ``chunks`` says how many deltas reached the caller before the cut."""

    def __init__(self, message: str, *, chunks: int = 0, attempts: int = 1) -> None:
        super().__init__(message, attempts=attempts)
        self.chunks = chunks


class LLMTooSlow(LLMUnavailable):
    """The client gave up on a request that was too slow, and closed its stream (so a
    llama.cpp server stops generating it). ``reason`` says which bound it crossed:

    * ``first_token`` — no token within ``LLM_TIMEOUT_SECONDS`` (the server did not start);
    * ``stalled`` — no token for ``LLM_STALL_SECONDS`` after the first one;
    * ``budget`` — the request's total budget (from ``max_tokens`` and the server's measured
      speed) was spent while it was still generating;
    * ``deadline`` — the caller's own deadline passed (e.g. the demo story's time budget).
    """

    def __init__(self, message: str, *, reason: str, tokens: int = 0, attempts: int = 1) -> None:
        super().__init__(message, attempts=attempts)
        self.reason = reason
        self.tokens = tokens


class LLMStopped(LLMUnavailable):
    """This process is stopping (the worker got SIGTERM / Ctrl-C): the request in flight was
    closed, so the server stops generating it, and is asked again by the next worker. Not the
    job's fault: it costs no attempt (``stop_generations``)."""


__all__ = [
    "LLMBadOutput",
    "LLMError",
    "LLMFormatRejected",
    "LLMRejected",
    "LLMStopped",
    "LLMStreamIncomplete",
    "LLMTooSlow",
    "LLMUnavailable",
]
