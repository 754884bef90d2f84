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
  :class:`~infra.llm.modes.ModeStore` (the database, for the app) and probed
  again after ``LLM_JSON_MODE_REPROBE_SECONDS``.
* Replies are parsed strictly (an echoed schema wrapper is unwrapped) and
  checked (``jsonschema``) against the envelope the caller names; invalid output is retried
  with a sharper instruction, then :class:`LLMBadOutput` is raised — never
  silently turned into "no knowledge".
* Every request is streamed — chat answers, extraction and story chunks alike — because
  closing a streamed request is the only way to make a llama.cpp server stop generating it
  (a non-streamed request keeps running on the server after the client gave up). Liveness
  is judged by progress, not by a fixed total: the first token must come within
  ``LLM_TIMEOUT_SECONDS``, later ones never more than ``LLM_STALL_SECONDS`` apart, and the
  whole reply within a budget derived from ``max_tokens`` and the server's measured speed
  (tokens/s remembered per server in a :class:`~infra.llm.speeds.SpeedStore`), between
  ``LLM_TIMEOUT_SECONDS`` and ``LLM_MAX_REQUEST_SECONDS``. On any give-up (stall, budget, a
  caller's deadline, cancel) the HTTP stream is closed *before* the request's gate slot is
  given back, so a retry never queues behind an abandoned generation. Giving up raises
  :class:`LLMTooSlow`.
* ``astream_chat`` (what the chat consumer uses) yields text deltas; ``complete_json`` collects
  them. A stream that ends without a finish reason (llama.cpp cuts a stream short when another
  request arrives) raises :class:`LLMStreamIncomplete`: it is not an answer.
* Every request passes a :class:`~infra.llm.gate.RequestGate`, which bounds
  how many requests the product sends at once and lets chat go first.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import openai

from infra import metrics

from .errors import (
    LLMBadOutput,
    LLMError,
    LLMFormatRejected,
    LLMRejected,
    LLMStopped,
    LLMStreamIncomplete,
    LLMTooSlow,
    LLMUnavailable,
)
from .gate import OPEN_GATE, Priority, RequestGate
from .modes import KnownMode, ModeStore, ProcessModeStore
from .speeds import ProcessSpeedStore, SpeedStore
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

#: Defaults of ``LLM_TIMEOUT_SECONDS`` (first token; the budget's floor), ``LLM_STALL_SECONDS``
#: (longest silence between tokens) and ``LLM_MAX_REQUEST_SECONDS`` (the budget's ceiling).
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_STALL_SECONDS = 30.0
DEFAULT_MAX_REQUEST_SECONDS = 1800.0

# Tuning of the client for every server (docs/llm-servers.md, "Budgets": at 3 tokens/s a llama.cpp
# extraction's budget is ~810 s, inside the ceiling).
#: Retries of one request (429 / 5xx / a missing first token / a stalled or cut stream).
LLM_MAX_RETRIES = 3
#: The ceiling of one request's budget, and its budget while the server's speed is unknown.
LLM_MAX_REQUEST_SECONDS = DEFAULT_MAX_REQUEST_SECONDS
#: Room kept for an extraction reply (sent as ``max_tokens``).
LLM_EXTRACTION_MAX_TOKENS = 768
#: A server that refused ``json_schema`` is asked for it again after this long (a day).
LLM_JSON_MODE_REPROBE_SECONDS = DEFAULT_REPROBE_SECONDS

#: A request's budget allows this many times the generation time its ``max_tokens`` need at
#: the measured speed (on top of the floor): a shared server slows down under load.
BUDGET_SPEED_MARGIN = 2.0

#: A reply shorter than this many tokens says too little about the server's speed to record.
MIN_SPEED_TOKENS = 8

#: First pause before the client asks again after a stalled or cut stream (doubled each time).
RETRY_BACKOFF_SECONDS = 0.5
MAX_RETRY_BACKOFF_SECONDS = 8.0


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
    """Where the LLM server is and how patiently to talk to it.

    ``timeout_seconds``: how long a request may wait for its first token (connecting and the
    server reading the prompt), and the floor of every request's budget. ``stall_seconds``:
    the longest silence between two tokens. ``max_request_seconds``: the ceiling of a
    request's budget, and its budget while the server's speed is not known yet.
    """

    base_url: str
    api_key: str = field(repr=False)
    model: str
    timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS
    max_retries: int = 3
    max_tokens: int | None = None
    reprobe_seconds: float = DEFAULT_REPROBE_SECONDS
    stall_seconds: float = DEFAULT_STALL_SECONDS
    max_request_seconds: float = DEFAULT_MAX_REQUEST_SECONDS

    @classmethod
    def from_settings(cls, role: str = Role.CHAT) -> LLMConfig | None:
        """Build from Django settings (``LLM_BASE_URL``, ``LLM_API_KEY``, ``LLM_MODEL``,
        ``LLM_TIMEOUT_SECONDS``, ``LLM_STALL_SECONDS``, ``LLM_MAX_REQUEST_SECONDS``,
        ``LLM_MAX_RETRIES``).

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
            max_tokens = LLM_EXTRACTION_MAX_TOKENS
        if not base_url or llm_forced_offline():
            return None
        if not model:
            raise ImproperlyConfigured("LLM_MODEL must be set when LLM_BASE_URL is set.")
        timeout = setting("LLM_TIMEOUT_SECONDS", None)
        retries = LLM_MAX_RETRIES
        reprobe = LLM_JSON_MODE_REPROBE_SECONDS
        stall = setting("LLM_STALL_SECONDS", None)
        ceiling = LLM_MAX_REQUEST_SECONDS
        return cls(
            base_url=base_url,
            api_key=api_key,
            model=model,
            timeout_seconds=float(timeout) if timeout not in (None, "") else DEFAULT_TIMEOUT_SECONDS,
            max_retries=int(retries) if retries not in (None, "") else 3,
            max_tokens=int(max_tokens) if max_tokens not in (None, "", 0) else None,
            reprobe_seconds=float(reprobe) if reprobe not in (None, "") else DEFAULT_REPROBE_SECONDS,
            stall_seconds=float(stall) if stall not in (None, "") else DEFAULT_STALL_SECONDS,
            max_request_seconds=float(ceiling) if ceiling not in (None, "") else DEFAULT_MAX_REQUEST_SECONDS,
        )

    def budget_seconds(self, max_tokens: int | None, tokens_per_second: float | None) -> float:
        """The total time one request may take: the floor (``timeout_seconds``) plus
        ``BUDGET_SPEED_MARGIN`` × the time ``max_tokens`` take at the measured speed, at most
        ``max_request_seconds``; the ceiling when the speed or ``max_tokens`` is unknown."""
        floor = self.timeout_seconds
        if not max_tokens or not tokens_per_second or tokens_per_second <= 0:
            return max(floor, self.max_request_seconds)
        wanted = floor + BUDGET_SPEED_MARGIN * max_tokens / tokens_per_second
        return max(floor, min(self.max_request_seconds, wanted))


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


def _run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coroutine`` to the end from sync code: on a new event loop in this thread, or —
    when this thread already runs one — in a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="llm-request") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _in_pool_thread(function: Callable[..., Any], *args: Any) -> Any:
    """Run ``function`` (a speed store call) in a pool thread and close that thread's database
    connections afterwards, so async callers leave no connection behind."""
    try:
        return function(*args)
    finally:
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 - no Django, or nothing to close
            pass


def _describe_attempt_failure(exc: BaseException) -> str:
    if isinstance(exc, _GaveUp):
        return f"{exc.reason} after {exc.waited:.1f}s, {exc.tokens} tokens"
    if isinstance(exc, _StreamCut):
        return "the stream ended without a finish reason"
    return _server_message(exc)


class _InFlight:
    """The collecting requests of this process, so a stopping worker can close them: a request
    left running would go on generating on the server (llama.cpp serves one at a time) for
    minutes after the worker is gone (docs/llm-servers.md, "Give-ups")."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._tasks: set[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = set()

    @contextlib.contextmanager
    def held(self) -> Any:
        """Register the running task for as long as its request is collected."""
        if self.stopping.is_set():
            raise LLMStopped("This process is stopping: no new request is sent to the LLM server.")
        entry = (asyncio.get_running_loop(), asyncio.current_task())
        with self._lock:
            self._tasks.add(entry)
        try:
            yield
        finally:
            with self._lock:
                self._tasks.discard(entry)

    def stop(self) -> int:
        """Cancel every registered task (its stream is closed as it unwinds); safe from a
        signal handler and from any thread. Returns how many were in flight."""
        self.stopping.set()
        with self._lock:
            entries = list(self._tasks)
        for loop, task in entries:
            with contextlib.suppress(RuntimeError):  # its loop already closed: nothing to stop
                loop.call_soon_threadsafe(task.cancel)
        return len(entries)


_IN_FLIGHT = _InFlight()


def stop_generations() -> int:
    """Close every LLM request this process is collecting and send no new one: what a worker
    does when it is told to stop, so no generation keeps running on the server after it. The
    callers get :class:`LLMStopped` (the turn job is retried, without counting an attempt)."""
    return _IN_FLIGHT.stop()


class LLMClient:
    """Chat and structured-output calls against one OpenAI-compatible server.

    Thread-safe and cheap to share: the underlying async ``openai`` client of the chat
    stream is created lazily, one per event loop; each sync call (``complete_json``) runs its
    stream on a loop of its own. ``modes`` remembers the JSON mode per server and ``speeds``
    its generation speed (process-local by default); ``gate`` bounds concurrent requests (no
    limit by default); ``priority`` is this client's place in the gate's queue.
    """

    def __init__(
        self,
        config: LLMConfig,
        *,
        modes: ModeStore | None = None,
        speeds: SpeedStore | None = None,
        gate: RequestGate = OPEN_GATE,
        priority: Priority = Priority.CHAT,
    ) -> None:
        self.config = config
        self.modes: ModeStore = modes if modes is not None else ProcessModeStore()
        self.speeds: SpeedStore = speeds if speeds is not None else ProcessSpeedStore()
        self.gate = gate
        self.priority = priority
        self._lock = threading.Lock()
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )

    @classmethod
    def from_settings(cls, role: str = Role.CHAT) -> LLMClient | None:
        """A client for the configured server of ``role`` ("chat" or "extraction"), or None
        when none is configured: JSON modes and speeds remembered in the database, requests
        bounded by ``LLM_MAX_CONCURRENT_REQUESTS``, chat before background work."""
        from django.conf import settings

        from .shared import shared_mode_store, shared_speed_store

        config = LLMConfig.from_settings(role)
        if config is None:
            return None
        gate = RequestGate(
            getattr(settings, "LLM_MAX_CONCURRENT_REQUESTS", 0),
            base_url=config.base_url,
            wait_seconds=getattr(settings, "LLM_SLOT_WAIT_SECONDS", 600.0),
        )
        priority = Priority.CHAT if role == Role.CHAT else Priority.BACKGROUND
        return cls(config, modes=shared_mode_store(), speeds=shared_speed_store(), gate=gate, priority=priority)

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
        """Release connections held for sync calls (each sync call closes its own; kept so
        callers can always close a client)."""

    async def aclose(self) -> None:
        """Release the connections of the async client of the running loop."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async_clients.pop(loop, None)
        if client is not None:
            await client.close()

    # -- budgets ---------------------------------------------------------------------

    @property
    def tokens_per_second(self) -> float | None:
        """The server's measured generation speed, None until one reply was measured."""
        return self.speeds.load(self.config.base_url, self.config.model)

    def budget_seconds(self, max_tokens: int | None = None) -> float:
        """The total time a request asking for ``max_tokens`` may take on this server (see
        :meth:`LLMConfig.budget_seconds`)."""
        max_tokens = max_tokens if max_tokens is not None else self.config.max_tokens
        return self.config.budget_seconds(max_tokens, self.tokens_per_second)

    async def abudget_seconds(self, max_tokens: int | None = None) -> float:
        """:meth:`budget_seconds` for async code (the speed is read in a pool thread)."""
        max_tokens = max_tokens if max_tokens is not None else self.config.max_tokens
        speed = await asyncio.to_thread(_in_pool_thread, self.speeds.load, self.config.base_url, self.config.model)
        return self.config.budget_seconds(max_tokens, speed)

    def expected_seconds(self, tokens: int) -> float | None:
        """How long generating ``tokens`` takes at the measured speed (None when unknown): what
        a caller with a deadline compares with the time it has left before it asks."""
        speed = self.tokens_per_second
        return tokens / speed if speed else None

    def _limits(self, max_tokens: int | None, speed: float | None, deadline: float | None) -> _Limits:
        return _Limits(
            first_token=self.config.timeout_seconds,
            stall=self.config.stall_seconds,
            budget=self.config.budget_seconds(max_tokens, speed),
            deadline=deadline,
            max_tokens=max_tokens,
            tokens_per_second=speed,
        )

    def _record_speed(self, progress: _Progress) -> None:
        speed = progress.tokens_per_second()
        if speed is None:
            return
        try:
            self.speeds.record(self.config.base_url, self.config.model, speed)
        except Exception:  # noqa: BLE001 - a lost measurement only costs a less fitting budget
            logger.warning("could not record the speed of %s", self.config.base_url, exc_info=True)

    async def _arecord_speed(self, progress: _Progress) -> None:
        if progress.tokens_per_second() is not None:
            await asyncio.to_thread(_in_pool_thread, self._record_speed, progress)

    # -- requests and their failures -------------------------------------------------

    def _chat_kwargs(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_format: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"model": self.config.model, "messages": [dict(m) for m in messages], "stream": True}
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

    async def _stream_attempt(
        self, client: _AsyncOpenAI, kwargs: Mapping[str, Any], limits: _Limits, progress: _Progress,
        sent: list[bool],
    ) -> AsyncIterator[str]:
        """One streamed request: yields its text deltas while it makes progress. Raises
        :class:`_GaveUp` when the first token, the next token, the budget or the caller's
        deadline is missed, :class:`_StreamCut` when the stream ends without a finish reason.
        Whatever ends it, the HTTP stream is closed before this generator finishes, so the
        server stops generating. ``sent`` gets True once the server accepted the request."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        ends = [began + limits.budget] + ([limits.deadline] if limits.deadline is not None else [])
        hard_end = min(ends)

        def gave_up() -> _GaveUp:
            now = loop.time()
            if limits.deadline is not None and now >= limits.deadline - 0.001:
                return _GaveUp("deadline", waited=now - began, tokens=progress.tokens, limit=limits.deadline - began)
            if now >= began + limits.budget - 0.001:
                return _GaveUp("budget", waited=now - began, tokens=progress.tokens, limit=limits.budget)
            if not progress.tokens:
                return _GaveUp("first_token", waited=now - began, tokens=0, limit=limits.first_token)
            return _GaveUp("stalled", waited=now - began, tokens=progress.tokens, limit=limits.stall)

        request_timeout = openai.Timeout(max(limits.budget, limits.first_token) + 5.0, connect=limits.first_token)
        stream = None
        try:
            try:
                async with asyncio.timeout_at(min(began + limits.first_token, hard_end)):
                    stream = await client.chat.completions.create(**kwargs, timeout=request_timeout)
            except TimeoutError:
                raise gave_up() from None
            sent.append(True)
            finish = None
            while True:
                if progress.last_at is None:
                    wait_until = began + limits.first_token
                else:
                    wait_until = progress.last_at + limits.stall
                try:
                    async with asyncio.timeout_at(min(wait_until, hard_end)):
                        chunk = await stream.__anext__()
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise gave_up() from None
                finish = _finish_reason(chunk) or finish
                if _is_token(chunk):
                    now = loop.time()
                    progress.tokens += 1
                    progress.first_at = progress.first_at if progress.first_at is not None else now
                    progress.last_at = now
                text = _delta_text(chunk)
                if text:
                    progress.chunks_out += 1
                    yield text
            if finish is None:
                raise _StreamCut
        finally:  # closed before the caller gives the gate's slot back
            if stream is not None:
                await stream.close()

    async def _collect(
        self, kwargs: Mapping[str, Any], limits: _Limits, *, what: str, format_requested: bool,
        measured: list[_Progress],
    ) -> str:
        """A whole streamed reply as text, asked again (after a pause) when an attempt stalled,
        was cut or failed in a way worth retrying; each attempt holds a gate slot only until its
        stream is closed. Every attempt's progress goes to ``measured``."""
        client = _AsyncOpenAI(**self._client_kwargs())
        attempts = self.config.max_retries + 1
        try:
            with _IN_FLIGHT.held():
                return await self._attempts(client, kwargs, limits, what=what, format_requested=format_requested,
                                            measured=measured, attempts=attempts)
        except asyncio.CancelledError:
            if not _IN_FLIGHT.stopping.is_set():
                raise
            raise LLMStopped(f"{what}: this process is stopping; the request was closed on the server "
                             "and is asked again by the next worker.") from None
        finally:
            await client.close()

    async def _attempts(
        self, client: _AsyncOpenAI, kwargs: Mapping[str, Any], limits: _Limits, *, what: str,
        format_requested: bool, measured: list[_Progress], attempts: int,
    ) -> str:
        """The attempts of :meth:`_collect`, one after the other."""
        for attempt in range(attempts):
            progress = _Progress()
            measured.append(progress)
            sent: list[bool] = []
            parts: list[str] = []
            try:
                async with self.gate.ahold(self.priority):
                    async with contextlib.aclosing(
                        self._stream_attempt(client, kwargs, limits, progress, sent)
                    ) as stream:
                        async for text in stream:
                            parts.append(text)
                return "".join(parts)
            except (openai.OpenAIError, _StreamCut, _GaveUp) as exc:
                retry = attempt + 1 < attempts and self._worth_retrying(
                    exc, _Progress(), sent=bool(sent), format_requested=format_requested)
                if not retry:
                    tried = attempt + 1 if (sent or attempt) else self._attempts_of(exc)
                    raise self._give_up(
                        exc, what=what, attempts=tried, format_requested=format_requested, limits=limits
                    ) from exc
                logger.warning("%s: attempt %d/%d failed (%s); the stream is closed, asking again",
                               what, attempt + 1, attempts, _describe_attempt_failure(exc))
            await asyncio.sleep(_backoff(attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_format: Mapping[str, Any] | None = None,
        what: str = "chat completion",
        deadline: float | None = None,
    ) -> str:
        """One completion, streamed and collected (see :meth:`_collect`); the speed it showed
        is remembered for the server."""
        kwargs = self._chat_kwargs(
            messages, temperature=temperature, max_tokens=max_tokens, response_format=response_format
        )
        limits = self._limits(kwargs.get("max_tokens"), self.tokens_per_second, deadline)
        measured: list[_Progress] = []
        try:
            return _run_coroutine(self._collect(
                kwargs, limits, what=what, format_requested=response_format is not None, measured=measured
            ))
        finally:
            for progress in measured:
                self._record_speed(progress)

    async def astream_chat(
        self, messages: Sequence[Message], *, temperature: float | None = None, max_tokens: int | None = None,
        deadline: float | None = None,
    ) -> AsyncIterator[str]:
        """Stream a chat completion, yielding content deltas as they arrive.

        Failures of the request itself are retried by the package; a stream that stalls,
        breaks or ends without a finish reason before the first delta is asked for again, up
        to ``max_retries`` times; after it, :class:`LLMStreamIncomplete` is raised (retrying
        would repeat text already shown). A stall, the request's budget or ``deadline`` (a
        ``time.monotonic()`` value) closes the stream. Cancelling the task that consumes it
        (or ``aclose()`` on it) closes the HTTP stream too, so the server stops generating,
        and only then gives the gate's slot back.
        """
        client = self._async()
        kwargs = self._chat_kwargs(messages, temperature=temperature, max_tokens=max_tokens)
        speed = await asyncio.to_thread(_in_pool_thread, self.speeds.load, self.config.base_url, self.config.model)
        limits = self._limits(kwargs.get("max_tokens"), speed, deadline)
        attempts = self.config.max_retries + 1
        what = "streaming chat"
        for attempt in range(attempts):
            progress = _Progress()
            sent: list[bool] = []
            try:
                async with self.gate.ahold(self.priority):
                    async with contextlib.aclosing(
                        self._stream_attempt(client, kwargs, limits, progress, sent)
                    ) as stream:
                        async for text in stream:
                            yield text
                await self._arecord_speed(progress)
                return
            except (openai.OpenAIError, _StreamCut, _GaveUp) as exc:
                await self._arecord_speed(progress)
                if attempt + 1 >= attempts or not self._worth_retrying(
                    exc, progress, sent=bool(sent), format_requested=False
                ):
                    tried = attempt + 1 if (sent or attempt) else self._attempts_of(exc)
                    raise self._give_up(
                        exc, what=what, attempts=tried, chunks_out=progress.chunks_out, limits=limits
                    ) from exc
                logger.warning("%s broke off before any text (attempt %d/%d: %s); asking again",
                               what, attempt + 1, attempts, _describe_attempt_failure(exc))
            except asyncio.CancelledError:
                logger.info("%s cancelled after %d chunks; the stream is closed", what, progress.chunks_out)
                raise
            await asyncio.sleep(_backoff(attempt))

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
        deadline: float | None = None,
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
        to servers that cannot enforce the schema (default: generated from it). ``deadline``
        (a ``time.monotonic()`` value) stops the request when it passes (:class:`LLMTooSlow`
        with ``reason="deadline"``), whatever its own budget.

        Every reply is streamed; see the module docstring for the bounds of a request.

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
                    deadline=deadline,
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
        deadline: float | None = None,
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
                deadline=deadline,
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
    "BUDGET_SPEED_MARGIN",
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
