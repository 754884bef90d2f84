"""What a failed LLM request means, and how the client reports it.

Classification of the ``openai`` package's errors (status, transient or final, a refused
``response_format``, the server's own message); the ``openai`` clients whose own retry decision
treats a refused format as final; and ``FailureReports``, the part of ``LLMClient`` that turns a
final failure or a give-up into the :class:`~infra.llm.errors.LLMError` its caller gets, and
decides whether a failed attempt is asked for again. One place for "what went wrong", apart
from how a request is streamed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import openai

from .config import LLMConfig
from .errors import LLMError, LLMFormatRejected, LLMRejected, LLMStreamIncomplete, LLMTooSlow, LLMUnavailable
from .liveness import RETRIED_GIVE_UPS, _GaveUp, _Limits, _Progress, _StreamCut

logger = logging.getLogger("legalmem.llm")

#: How much of a raw reply goes into error messages and logs.
RAW_EXCERPT_CHARS = 500

#: HTTP statuses that mean "the server refuses this response_format" whatever the body says.
FORMAT_REJECTION_STATUSES = frozenset({400, 422})

#: Words in an error body that show the server objects to the requested format.
FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format", "schema")


def _truncate(text: str | None, limit: int = RAW_EXCERPT_CHARS) -> str:
    if text is None:
        return ""
    return text if len(text) <= limit else text[:limit] + f"… [{len(text) - limit} more chars]"


def _status_of(exc: BaseException) -> int | None:
    return exc.status_code if isinstance(exc, openai.APIStatusError) else None


def _server_message(exc: BaseException) -> str:
    """The server's own error text, without the package's 'Error code' prefix."""
    body = getattr(exc, "body", None)
    if isinstance(body, Mapping):
        message = body.get("message")
        if isinstance(message, str) and message:
            return _truncate(message, 300)
    return _truncate(str(getattr(exc, "message", None) or exc or type(exc).__name__), 300)


def _is_format_rejection(exc: BaseException) -> bool:
    """The final error of a request whose ``response_format`` the server refused."""
    return isinstance(exc, openai.APIStatusError) and _refuses_format(exc.response)


def _is_transient(exc: BaseException) -> bool:
    """Worth retrying: timeouts, connection errors, 408, 429, 5xx, and errors
    reported inside a stream (no status)."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    return isinstance(exc, openai.APIError)


def _refuses_format(response: Any) -> bool:
    """An HTTP error reply to a request carrying a ``response_format`` that objects to the
    format (any 400/422, or a body naming it: llama-cpp-python answers with HTTP 500)."""
    request = getattr(response, "request", None)
    try:
        if request is None or b'"response_format"' not in (request.content or b""):
            return False
        if response.status_code in FORMAT_REJECTION_STATUSES:
            return True
        text = response.text.lower()
    except Exception:  # noqa: BLE001 - a streamed or unread body: not a JSON request
        return False
    return response.status_code not in (401, 403, 404, 408, 429) and any(word in text for word in FORMAT_WORDS)


def _unread_format_error(response: Any) -> bool:
    """A 5xx reply to a request carrying a ``response_format`` whose body is not read yet
    (a streamed request): it may be a format refusal (llama-cpp-python), which only the body
    tells, so the package must not retry it — the client reads it and decides."""
    request = getattr(response, "request", None)
    try:
        if request is None or b'"response_format"' not in (request.content or b""):
            return False
        if response.status_code < 500:
            return False
        response.text  # noqa: B018 - raises while the body is unread
    except Exception:  # noqa: BLE001 - unread
        return True
    return False


class _FinalFormatRefusal:
    """Mixed into the ``openai`` clients: their own retry decision, except that a refused
    ``response_format`` is final (the caller falls back to the next JSON mode at once), and a
    5xx to a JSON request is left to the client (its body decides whether it is a refusal)."""

    def _should_retry(self, response: Any) -> bool:
        if _refuses_format(response) or _unread_format_error(response):
            return False
        return super()._should_retry(response)  # type: ignore[misc]


class _OpenAI(_FinalFormatRefusal, openai.OpenAI):
    pass


class _AsyncOpenAI(_FinalFormatRefusal, openai.AsyncOpenAI):
    pass


def _describe_attempt_failure(exc: BaseException) -> str:
    if isinstance(exc, _GaveUp):
        return f"{exc.reason} after {exc.waited:.1f}s, {exc.tokens} tokens"
    if isinstance(exc, _StreamCut):
        return "the stream ended without a finish reason"
    return _server_message(exc)


class FailureReports:
    """A base of :class:`~infra.llm.client.LLMClient` (not used alone): its final failures
    translated into :class:`LLMError` and logged, and its decision to ask a failed attempt
    again."""

    config: LLMConfig

    def _failure(self, exc: BaseException, *, what: str, attempts: int, format_requested: bool = False) -> LLMError:
        """Translate a final ``openai`` failure into an :class:`LLMError`."""
        where = f"the language model server at {self.config.base_url}"
        status = _status_of(exc)
        if format_requested and _is_format_rejection(exc):
            return LLMFormatRejected(
                f"{what}: {where} refused the response format (HTTP {status}: {_server_message(exc)}).",
                status_code=status,
            )
        if not _is_transient(exc) and status is not None:
            hint = ""
            if status in (401, 403):
                hint = " Check LLM_API_KEY."
            elif status == 404:
                hint = f" Check LLM_MODEL ({self.config.model!r}) and LLM_BASE_URL."
            return LLMRejected(
                f"{what}: {where} rejected the request (HTTP {status}: {_server_message(exc)}).{hint}",
                status_code=status,
            )
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(exc, openai.APITimeoutError):
            detail = f"no answer within {self.config.timeout_seconds:g}s"
        elif isinstance(exc, openai.APIConnectionError):
            detail = f"cannot connect ({_server_message(exc)})"
        elif isinstance(exc, _StreamCut):
            detail = "the stream ended without a finish reason"
        elif status is not None:
            detail = f"HTTP {status}: {_server_message(exc)}"
        else:
            detail = _server_message(exc)
        return LLMUnavailable(
            f"{what}: {where} is unavailable ({detail}) after {tries}.", attempts=attempts, status_code=status
        )

    def _too_slow(self, exc: _GaveUp, *, what: str, attempts: int, limits: _Limits) -> LLMTooSlow:
        """The :class:`LLMTooSlow` for a stream the client gave up on (and closed)."""
        where = f"the language model server at {self.config.base_url}"
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if exc.reason == "first_token":
            detail = f"no answer within {exc.limit:g}s"
        elif exc.reason == "stalled":
            detail = f"the stream stalled: no token for {exc.limit:g}s after {exc.tokens} tokens"
        elif exc.reason == "budget":
            speed = (f"{limits.tokens_per_second:.1f} tokens/s measured" if limits.tokens_per_second
                     else "speed not measured yet")
            detail = (f"still generating after its budget of {exc.limit:.0f}s ({exc.tokens} tokens; "
                      f"max_tokens {limits.max_tokens}, {speed})")
        else:
            detail = f"the caller's deadline passed after {exc.waited:.0f}s ({exc.tokens} tokens)"
        return LLMTooSlow(
            f"{what}: {where} is too slow ({detail}); the stream was closed, after {tries}.",
            reason=exc.reason, tokens=exc.tokens, attempts=attempts,
        )

    def _attempts_of(self, exc: BaseException) -> int:
        """Requests the package sent before giving up: all of them for a failure it retries."""
        return self.config.max_retries + 1 if _is_transient(exc) else 1

    def _give_up(
        self, exc: BaseException, *, what: str, attempts: int, chunks_out: int = 0, format_requested: bool = False,
        limits: _Limits | None = None,
    ) -> LLMError:
        """The :class:`LLMError` for a final failure, logged."""
        if chunks_out:
            # Text already reached the caller: a retry would repeat it.
            if isinstance(exc, _StreamCut):
                reason = "it ended without a finish reason"
            elif isinstance(exc, _GaveUp) and limits is not None:
                reason = self._too_slow(exc, what=what, attempts=attempts, limits=limits).message
            else:
                reason = _server_message(exc)
            err: LLMError = LLMStreamIncomplete(
                f"{what}: the stream from {self.config.base_url} broke off after {chunks_out} chunks ({reason}).",
                chunks=chunks_out,
                attempts=attempts,
            )
            logger.error("%s", err)
            return err
        if isinstance(exc, _GaveUp) and limits is not None:
            err = self._too_slow(exc, what=what, attempts=attempts, limits=limits)
        else:
            err = self._failure(exc, what=what, attempts=attempts, format_requested=format_requested)
        if isinstance(exc, _StreamCut):
            err = LLMStreamIncomplete(err.message, chunks=0, attempts=attempts)
        if isinstance(err, LLMUnavailable):
            logger.error("%s", err)
        else:
            logger.warning("%s", err)
        return err

    def _worth_retrying(self, exc: BaseException, progress: _Progress, *, sent: bool, format_requested: bool) -> bool:
        """Whether one failed attempt is asked for again: never after text reached the caller;
        a stall, a missing first token, a cut stream or an error inside the stream are; a failed
        request is only when the package left its retrying to us (a 5xx to a JSON request that
        is not a format refusal)."""
        if progress.chunks_out:
            return False
        if isinstance(exc, _GaveUp):
            return exc.reason in RETRIED_GIVE_UPS
        if isinstance(exc, _StreamCut):
            return True
        if not sent:
            status = _status_of(exc)
            return (format_requested and status is not None and status >= 500
                    and not _is_format_rejection(exc))
        return _is_transient(exc)
