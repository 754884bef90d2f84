"""LLM client for any OpenAI-compatible server (DeepSeek, OpenAI, vLLM, Ollama,
llama.cpp server) over the official ``openai`` package.

Why a wrapper and not ``openai`` directly:

* Retries are the ``openai`` package's own (``max_retries`` = ``LLM_MAX_RETRIES``):
  408/429/5xx, timeouts and connection errors, exponential backoff with jitter,
  ``Retry-After`` / ``retry-after-ms`` honoured (the package logs each retry to the
  ``openai`` logger). We only tell it that a reply refusing the requested
  ``response_format`` is final, and translate the last failure into
  :class:`LLMUnavailable` / :class:`LLMRejected`. A stream that breaks before
  any text reached the caller is asked for again here (the package cannot see it).
* Structured output follows seed 001 §4: ask for ``json_schema``; a server
  that rejects it is asked for ``json_object`` with an example reply in the
  prompt, then for a plain completion with the same prompt. A rejection is any
  400/422, or any error whose body names the format (llama-cpp-python answers
  ``json_schema`` with a 500): it falls back at once, never retried as a
  transient failure. The mode that worked is remembered per server in a
  :class:`~memory.llm.modes.ModeStore` (the database, for the app) and probed
  again after ``LLM_JSON_MODE_REPROBE_SECONDS``.
* Replies are parsed strictly (an echoed schema wrapper is unwrapped) and
  checked (``jsonschema``) against the envelope the caller names; invalid output is retried
  with a sharper instruction, then :class:`LLMBadOutput` is raised — never
  silently turned into "no knowledge".
* Streaming is an async iterator of text deltas (``astream_chat``, what the chat
  consumer uses); it closes the HTTP stream when the consuming task is cancelled (a ``cancel`` frame or a
  websocket disconnect must stop generation on the server too). A stream that
  ends without a finish reason (llama.cpp cuts a stream short when another
  request arrives) raises :class:`LLMStreamIncomplete`: it is not an answer.
* Every request passes a :class:`~memory.llm.gate.RequestGate`, which bounds
  how many requests the product sends at once and lets chat go first.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import openai

from legalmem_site import metrics

from .errors import LLMBadOutput, LLMError, LLMFormatRejected, LLMRejected, LLMStreamIncomplete, LLMUnavailable
from .gate import OPEN_GATE, Priority, RequestGate
from .modes import KnownMode, ModeStore, ProcessModeStore
from .structured import (
    MODE_ORDER,
    JSONMode,
    JSONReplyError,
    parse_json_object,
    retry_hint,
    schema_hint,
    validate_json,
)
from .switch import llm_forced_offline

logger = logging.getLogger("legalmem.llm")

#: A chat message as the OpenAI API takes it: ``{"role": ..., "content": ...}``.
Message = Mapping[str, Any]

#: System prompt for JSON requests (seed 001 uses exactly this one).
DEFAULT_JSON_SYSTEM = "You must respond with a JSON object."

#: How much of a raw reply goes into error messages and logs.
RAW_EXCERPT_CHARS = 500

#: HTTP statuses that mean "the server refuses this response_format" whatever the body says.
FORMAT_REJECTION_STATUSES = frozenset({400, 422})

#: Words in an error body that show the server objects to the requested format.
FORMAT_WORDS = ("response_format", "json_schema", "json_object", "response format", "schema")

#: Default interval before a server whose ``json_schema`` failed is asked for it again.
DEFAULT_REPROBE_SECONDS = 86400.0


class Role:
    """What a client is for; each role may have its own server, model and priority.

    ``CHAT``: the chat server, first in line. ``EXTRACTION``: the extraction server / model
    (``LLM_EXTRACTION_*``, defaulting to the chat ones), behind chat. ``BACKGROUND``: the
    chat server and model for other background work (e.g. story generation), behind chat.
    """

    CHAT = "chat"
    EXTRACTION = "extraction"
    BACKGROUND = "background"


@dataclass(frozen=True)
class LLMConfig:
    """Where the LLM server is and how patiently to talk to it."""

    base_url: str
    api_key: str = field(repr=False)
    model: str
    timeout_seconds: float = 60
    max_retries: int = 3
    max_tokens: int | None = None
    reprobe_seconds: float = DEFAULT_REPROBE_SECONDS

    @classmethod
    def from_settings(cls, role: str = Role.CHAT) -> LLMConfig | None:
        """Build from Django settings (``LLM_BASE_URL``, ``LLM_API_KEY``, ``LLM_MODEL``,
        ``LLM_TIMEOUT_SECONDS``, ``LLM_MAX_RETRIES``).

        ``role="extraction"`` reads ``LLM_EXTRACTION_BASE_URL`` / ``_MODEL`` / ``_API_KEY``
        first (each defaults to the chat one) and ``LLM_EXTRACTION_MAX_TOKENS``.
        Returns None when no base URL is set: the offline engine is used instead.
        """
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        def setting(name: str, default: Any = "") -> Any:
            return getattr(settings, name, default)

        base_url = str(setting("LLM_BASE_URL") or "").strip()
        model = str(setting("LLM_MODEL") or "").strip()
        api_key = str(setting("LLM_API_KEY") or "")
        # Chat answers get their budget per request (what is left of the context window);
        # other callers of the chat role (story generation) set their own.
        max_tokens = None
        if role == Role.EXTRACTION:
            base_url = str(setting("LLM_EXTRACTION_BASE_URL") or "").strip() or base_url
            model = str(setting("LLM_EXTRACTION_MODEL") or "").strip() or model
            api_key = str(setting("LLM_EXTRACTION_API_KEY") or "") or api_key
            max_tokens = setting("LLM_EXTRACTION_MAX_TOKENS", None)
        if not base_url or llm_forced_offline():
            return None
        if not model:
            raise ImproperlyConfigured("LLM_MODEL must be set when LLM_BASE_URL is set.")
        timeout = setting("LLM_TIMEOUT_SECONDS", None)
        retries = setting("LLM_MAX_RETRIES", None)
        reprobe = setting("LLM_JSON_MODE_REPROBE_SECONDS", None)
        return cls(
            base_url=base_url,
            api_key=api_key,
            model=model,
            timeout_seconds=float(timeout) if timeout not in (None, "") else 60.0,
            max_retries=int(retries) if retries not in (None, "") else 3,
            max_tokens=int(max_tokens) if max_tokens not in (None, "", 0) else None,
            reprobe_seconds=float(reprobe) if reprobe not in (None, "") else DEFAULT_REPROBE_SECONDS,
        )


# --------------------------------------------------------------------------
# Error classification
# --------------------------------------------------------------------------


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


class _FinalFormatRefusal:
    """Mixed into the ``openai`` clients: their own retry decision, except that a refused
    ``response_format`` is final (the caller falls back to the next JSON mode at once)."""

    def _should_retry(self, response: Any) -> bool:
        return not _refuses_format(response) and super()._should_retry(response)  # type: ignore[misc]


class _OpenAI(_FinalFormatRefusal, openai.OpenAI):
    pass


class _AsyncOpenAI(_FinalFormatRefusal, openai.AsyncOpenAI):
    pass


@dataclass(frozen=True)
class JSONReply:
    """What :meth:`LLMClient.ask_json` got: the object, the JSON mode that produced it, how
    many replies were asked for in that mode, and the modes the server refused on the way."""

    data: dict[str, Any]
    mode: JSONMode
    attempts: int
    refused: tuple[str, ...] = ()


# --------------------------------------------------------------------------
# The client
# --------------------------------------------------------------------------


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


def _message_text(completion: Any) -> str | None:
    """Content of a non-streamed completion, None if the reply has none."""
    choices = getattr(completion, "choices", None)
    if not choices:
        return None
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else None


class _StreamCut(Exception):
    """Internal: a stream ended with no finish reason."""


class LLMClient:
    """Chat and structured-output calls against one OpenAI-compatible server.

    Thread-safe and cheap to share: the underlying ``openai`` clients are
    created lazily (one sync client, one async client per event loop).
    ``modes`` remembers the JSON mode per server (process-local by default);
    ``gate`` bounds concurrent requests (no limit by default); ``priority`` is
    this client's place in the gate's queue.
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        modes: ModeStore | None = None,
        gate: RequestGate = OPEN_GATE,
        priority: Priority = Priority.CHAT,
    ) -> None:
        self.config = config
        self.modes: ModeStore = modes if modes is not None else ProcessModeStore()
        self.gate = gate
        self.priority = priority
        self._lock = threading.Lock()
        self._sync_client: _OpenAI | None = None
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )

    @classmethod
    def from_settings(cls, role: str = Role.CHAT) -> LLMClient | None:
        """A client for the configured server of ``role`` ("chat" or "extraction"), or None
        when none is configured: JSON modes remembered in the database, requests bounded by
        ``LLM_MAX_CONCURRENT_REQUESTS``, chat before background work."""
        from django.conf import settings

        from .modes import DatabaseModeStore

        config = LLMConfig.from_settings(role)
        if config is None:
            return None
        gate = RequestGate(
            getattr(settings, "LLM_MAX_CONCURRENT_REQUESTS", 0),
            base_url=config.base_url,
            wait_seconds=getattr(settings, "LLM_SLOT_WAIT_SECONDS", 600.0),
        )
        priority = Priority.CHAT if role == Role.CHAT else Priority.BACKGROUND
        return cls(config, modes=DatabaseModeStore(), gate=gate, priority=priority)

    def __repr__(self) -> str:
        return f"LLMClient(base_url={self.config.base_url!r}, model={self.config.model!r}, priority={self.priority.value!r})"

    # -- underlying openai clients -------------------------------------------------

    def _client_kwargs(self) -> dict[str, Any]:
        return {
            "base_url": self.config.base_url,
            # Local servers (vLLM, llama.cpp, Ollama) accept any key; the package
            # insists on one, "EMPTY" is the usual placeholder.
            "api_key": self.config.api_key or "EMPTY",
            "timeout": self.config.timeout_seconds,
            "max_retries": self.config.max_retries,
        }

    @property
    def _sync(self) -> _OpenAI:
        with self._lock:
            if self._sync_client is None:
                self._sync_client = _OpenAI(**self._client_kwargs())
            return self._sync_client

    def _async(self) -> _AsyncOpenAI:
        """The async client bound to the running event loop (connection pools
        cannot be shared between loops)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async_clients.get(loop)
            if client is None:
                client = _AsyncOpenAI(**self._client_kwargs())
                self._async_clients[loop] = client
            return client

    def close(self) -> None:
        """Release the sync client's connections."""
        with self._lock:
            client, self._sync_client = self._sync_client, None
        if client is not None:
            client.close()

    async def aclose(self) -> None:
        """Release the connections of the async client of the running loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async_clients.pop(loop, None)
        if client is not None:
            await client.close()

    # -- requests and their failures -------------------------------------------------

    def _chat_kwargs(
        self,
        messages: Sequence[Message],
        *,
        stream: bool = False,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.config.model, "messages": [dict(m) for m in messages]}
        if stream:
            kwargs["stream"] = True
        if temperature is not None:
            kwargs["temperature"] = temperature
        max_tokens = max_tokens if max_tokens is not None else self.config.max_tokens
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if response_format is not None:
            kwargs["response_format"] = dict(response_format)
        return kwargs

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

    def _attempts_of(self, exc: BaseException) -> int:
        """Requests the package sent before giving up: all of them for a failure it retries."""
        return self.config.max_retries + 1 if _is_transient(exc) else 1

    def _give_up(
        self, exc: BaseException, *, what: str, attempts: int, chunks_out: int = 0, format_requested: bool = False
    ) -> LLMError:
        """The :class:`LLMError` for a final failure, logged."""
        if chunks_out:
            # Text already reached the caller: a retry would repeat it.
            cut = isinstance(exc, _StreamCut)
            reason = "it ended without a finish reason" if cut else _server_message(exc)
            err: LLMError = LLMStreamIncomplete(
                f"{what}: the stream from {self.config.base_url} broke off after {chunks_out} chunks ({reason}).",
                chunks=chunks_out,
                attempts=attempts,
            )
            logger.error("%s", err)
            return err
        err = self._failure(exc, what=what, attempts=attempts, format_requested=format_requested)
        if isinstance(exc, _StreamCut):
            err = LLMStreamIncomplete(err.message, chunks=0, attempts=attempts)
        if isinstance(err, LLMUnavailable):
            logger.error("%s", err)
        else:
            logger.warning("%s", err)
        return err

    def _chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_format: Mapping[str, Any] | None = None,
        what: str = "chat completion",
    ) -> str | None:
        """One non-streamed completion (the package retries transient failures)."""
        kwargs = self._chat_kwargs(
            messages, temperature=temperature, max_tokens=max_tokens, response_format=response_format
        )
        try:
            with self.gate.hold(self.priority):
                completion = self._sync.chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise self._give_up(
                exc, what=what, attempts=self._attempts_of(exc), format_requested=response_format is not None
            ) from exc
        return _message_text(completion)

    async def astream_chat(
        self, messages: Sequence[Message], *, temperature: float | None = None, max_tokens: int | None = None
    ) -> AsyncIterator[str]:
        """Stream a chat completion, yielding content deltas as they arrive.

        Failures of the request itself are retried by the package; a stream that breaks
        (or ends without a finish reason) before the first delta is asked for again, up to
        ``max_retries`` times; after it, :class:`LLMStreamIncomplete` is raised (retrying
        would repeat text already shown). Cancelling the task that consumes it (or
        ``aclose()`` on it) closes the HTTP stream, so the server stops generating, and
        gives the gate's slot back.
        """
        client = self._async()
        kwargs = self._chat_kwargs(messages, stream=True, temperature=temperature, max_tokens=max_tokens)
        attempts = self.config.max_retries + 1
        what = "streaming chat"
        for attempt in range(attempts):
            stream = None
            chunks_out = 0
            try:
                async with self.gate.ahold(self.priority):
                    try:
                        stream = await client.chat.completions.create(**kwargs)
                        finish = None
                        async for chunk in stream:
                            finish = _finish_reason(chunk) or finish
                            text = _delta_text(chunk)
                            if text:
                                chunks_out += 1
                                yield text
                        if finish is None:
                            raise _StreamCut
                        return
                    finally:  # closed before the slot is given back
                        if stream is not None:
                            await stream.close()
            except (openai.OpenAIError, _StreamCut) as exc:
                if stream is None:  # the request failed: the package has retried it already
                    raise self._give_up(exc, what=what, attempts=self._attempts_of(exc)) from exc
                if chunks_out or attempt + 1 >= attempts or not (_is_transient(exc) or isinstance(exc, _StreamCut)):
                    raise self._give_up(exc, what=what, attempts=attempt + 1, chunks_out=chunks_out) from exc
                logger.warning("%s broke off before any text (attempt %d/%d: %s); asking again",
                               what, attempt + 1, attempts, _server_message(exc))
            except asyncio.CancelledError:
                logger.info("%s cancelled after %d chunks; the stream is closed", what, chunks_out)
                raise

    # -- structured output -------------------------------------------------------------

    @property
    def json_mode(self) -> JSONMode:
        """The response_format mode :meth:`complete_json` starts with: the one known to
        work on this server, or ``json_schema`` when none is known or it is time to
        probe the better modes again."""
        known = self.modes.load(self.config.base_url, self.config.model)
        if known is None:
            return JSONMode.JSON_SCHEMA
        age = time.time() - known.probed_at.timestamp()
        if known.mode is not JSONMode.JSON_SCHEMA and age >= self.config.reprobe_seconds:
            logger.info("LLM server %s: probing json_schema again (last probed %.0fs ago)", self.config.base_url, age)
            return JSONMode.JSON_SCHEMA
        return known.mode

    def complete_json(self, prompt: str, **kwargs: Any) -> dict[str, Any]:
        """:meth:`ask_json`, the object only."""
        return self.ask_json(prompt, **kwargs).data

    def ask_json(
        self,
        prompt: str,
        *,
        schema: Mapping[str, Any],
        schema_name: str,
        system: str = DEFAULT_JSON_SYSTEM,
        temperature: float | None = None,
        max_tokens: int | None = None,
        envelope: Mapping[str, Any] | None = None,
        example: Any = None,
    ) -> JSONReply:
        """Ask for a JSON object matching ``schema``: the parsed object, with the mode that
        produced it and how many replies it took (a :class:`JSONReply`).

        Fallback chain (seed 001 §4): ``json_schema`` → ``json_object`` with an
        example reply in the prompt → plain request with the same prompt; each
        step at once when the server refuses the format (no retries). The mode
        that works is remembered per server. ``schema_name`` names the schema for
        ``json_schema`` (letters, digits, ``_`` and ``-``).

        ``envelope`` is what a reply must match as a whole (default: ``schema``);
        pass a looser one when the caller checks items one by one, so one bad
        item does not cost the whole reply. ``example`` is the example reply shown
        to servers that cannot enforce the schema (default: generated from it).

        Raises :class:`LLMBadOutput` when replies stay invalid after
        ``max_retries`` retries, :class:`LLMUnavailable` when the server keeps
        failing, :class:`LLMRejected` for other 4xx answers.
        """
        first = self.json_mode
        known = self.modes.load(self.config.base_url, self.config.model)
        refused: list[str] = []
        for mode in MODE_ORDER[MODE_ORDER.index(first):]:
            try:
                data, attempts = self._complete_json_in_mode(
                    mode,
                    prompt,
                    schema=schema,
                    envelope=envelope if envelope is not None else schema,
                    example=example,
                    schema_name=schema_name,
                    system=system,
                    temperature=temperature,
                    max_tokens=max_tokens,
                )
            except LLMFormatRejected as exc:
                metrics.LLM_JSON_REQUESTS.labels(mode.value, "format_refused").inc()
                if mode is JSONMode.PLAIN:
                    raise
                following = MODE_ORDER[MODE_ORDER.index(mode) + 1]
                logger.warning(
                    "LLM server %s rejected response_format=%s (HTTP %s); falling back to %s",
                    self.config.base_url,
                    mode.value,
                    exc.status_code,
                    following.value,
                )
                self.modes.save(self.config.base_url, self.config.model, following, error=exc.message)
                known = KnownMode(following, datetime.now(timezone.utc))
                refused.append(mode.value)
                continue
            except Exception as exc:
                metrics.LLM_JSON_REQUESTS.labels(mode.value, type(exc).__name__).inc()
                raise
            metrics.LLM_JSON_REQUESTS.labels(mode.value, "ok").inc()
            if known is None or known.mode is not mode:
                self.modes.save(self.config.base_url, self.config.model, mode)
            return JSONReply(data=data, mode=mode, attempts=attempts, refused=tuple(refused))
        raise AssertionError("unreachable")  # pragma: no cover

    def _complete_json_in_mode(
        self,
        mode: JSONMode,
        prompt: str,
        *,
        schema: Mapping[str, Any],
        envelope: Mapping[str, Any],
        example: Any,
        schema_name: str,
        system: str,
        temperature: float | None,
        max_tokens: int | None,
    ) -> tuple[dict[str, Any], int]:
        """One mode of the chain: request, parse, validate; retry invalid output up to
        ``max_retries`` times, each retry told what was wrong with the last reply. Returns the
        object and the number of replies asked for."""
        response_format: dict[str, Any] | None
        if mode is JSONMode.JSON_SCHEMA:
            response_format = {"type": "json_schema", "json_schema": {"name": schema_name, "schema": dict(schema)}}
            user_content = prompt
        elif mode is JSONMode.JSON_OBJECT:
            response_format = {"type": "json_object"}
            user_content = prompt + schema_hint(schema, example)
        else:
            response_format = None
            user_content = prompt + schema_hint(schema, example)
        what = f"JSON completion ({schema_name}, {mode.value})"

        attempts = self.config.max_retries + 1
        raw: str | None = None
        problems: list[str] = []
        for attempt in range(attempts):
            content = user_content + (retry_hint(problems) if problems else "")
            messages = [{"role": "system", "content": system}, {"role": "user", "content": content}]
            raw = self._chat(
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                response_format=response_format,
                what=what,
            )
            try:
                return parse_json_object(raw, envelope), attempt + 1
            except JSONReplyError as exc:
                problems = exc.problems
                logger.warning(
                    "%s: invalid output (attempt %d/%d): %s; raw=%r",
                    what,
                    attempt + 1,
                    attempts,
                    "; ".join(problems[:5]),
                    _truncate(raw, 200),
                )
        err = LLMBadOutput(
            f"{what}: the language model did not return a valid JSON object after {attempts} "
            f"attempt{'s' if attempts != 1 else ''} ({'; '.join(problems[:5])}). "
            f"Last reply: {_truncate(raw)!r}",
            raw=_truncate(raw, 2000),
            problems=problems,
        )
        logger.error("%s", err)
        raise err


__all__ = [
    "DEFAULT_JSON_SYSTEM",
    "JSONMode",
    "JSONReply",
    "JSONReplyError",
    "LLMClient",
    "LLMConfig",
    "Role",
    "parse_json_object",
    "schema_hint",
    "validate_json",
]
