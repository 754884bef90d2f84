"""How the LLM client judges a streamed reply alive (docs/llm-servers.md, "Budgets").

What counts as a token in a streamed chunk; the bounds of one request (``_Limits``: first token,
stall, budget, the caller's deadline); what one attempt produced (``_Progress``, from which the
server's speed is measured); the two ways an attempt ends without an answer (``_GaveUp`` with
its reason, ``_StreamCut``); and the pause before the next attempt. ``LLMClient._stream_attempt``
applies them; they sit apart so the rules of liveness read in one place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: A reply shorter than this many tokens says too little about the server's speed to record.
MIN_SPEED_TOKENS = 8

#: First pause before the client asks again after a stalled or cut stream (doubled each time).
RETRY_BACKOFF_SECONDS = 0.5
MAX_RETRY_BACKOFF_SECONDS = 8.0


def _delta_text(chunk: Any) -> str:
    """Content delta of one streamed chunk ('' for role / usage / final chunks)."""
    choices = getattr(chunk, "choices", None) or []
    if not choices:
        return ""
    delta = getattr(choices[0], "delta", None)
    content = getattr(delta, "content", None)
    return content if isinstance(content, str) else ""


def _finish_reason(chunk: Any) -> str | None:
    """The finish reason a streamed chunk carries (None on all but the last)."""
    choices = getattr(chunk, "choices", None) or []
    return getattr(choices[0], "finish_reason", None) if choices else None


def _is_token(chunk: Any) -> bool:
    """A chunk that shows the model is generating: text or reasoning text (role-only, finish,
    usage and keep-alive chunks are not progress)."""
    choices = getattr(chunk, "choices", None) or []
    if not choices:
        return False
    delta = getattr(choices[0], "delta", None)
    reasoning = getattr(delta, "reasoning_content", None) if delta is not None else None
    return bool(_delta_text(chunk) or reasoning)


class _StreamCut(Exception):
    """Internal: a stream ended with no finish reason."""


class _GaveUp(Exception):
    """Internal: the client stopped waiting for a stream (and closed it). ``reason`` is one of
    :data:`GIVE_UP_REASONS`."""

    def __init__(self, reason: str, *, waited: float, tokens: int, limit: float) -> None:
        super().__init__(reason)
        self.reason = reason
        self.waited = waited
        self.tokens = tokens
        self.limit = limit


#: Why a stream is given up: no first token, a silence between tokens, the request's budget,
#: the caller's deadline. The first two are worth another request; the last two are not.
GIVE_UP_REASONS = ("first_token", "stalled", "budget", "deadline")
RETRIED_GIVE_UPS = frozenset({"first_token", "stalled"})


@dataclass(frozen=True)
class _Limits:
    """The bounds of one request: first-token wait, stall, total budget (seconds), and the
    caller's deadline (a ``time.monotonic()`` value, or None)."""

    first_token: float
    stall: float
    budget: float
    deadline: float | None = None
    max_tokens: int | None = None
    tokens_per_second: float | None = None


@dataclass
class _Progress:
    """What one streamed attempt produced: tokens, when the first and last arrived, and how
    many text deltas reached the caller."""

    tokens: int = 0
    first_at: float | None = None
    last_at: float | None = None
    chunks_out: int = 0

    def tokens_per_second(self) -> float | None:
        """The generation speed this attempt showed, or None when it was too short to tell."""
        if self.tokens < MIN_SPEED_TOKENS or self.first_at is None or self.last_at is None:
            return None
        seconds = self.last_at - self.first_at
        return (self.tokens - 1) / seconds if seconds > 0 else None


def _backoff(attempt: int) -> float:
    return min(MAX_RETRY_BACKOFF_SECONDS, RETRY_BACKOFF_SECONDS * 2**attempt)
