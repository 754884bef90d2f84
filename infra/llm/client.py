"""LLM client for any OpenAI-compatible server (DeepSeek, OpenAI, vLLM, Ollama,
llama.cpp server) over the official ``openai`` package.

Why a wrapper and not ``openai`` directly:

* Retries are the ``openai`` package's own (``max_retries`` = ``settings.LLM_MAX_RETRIES``):
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
  again after ``settings.LLM_JSON_MODE_REPROBE_SECONDS``.
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

This module holds :class:`LLMClient` and its requests; the rest sits beside it, one concern a
module: ``config.py`` (``Role``, ``LLMConfig``, the tuning constants), ``liveness.py`` (what a
token is, a request's limits, give-ups, backoff), ``failures.py`` (what an error means, and
``FailureReports``, the client's failure translation), ``json_requests.py`` (``JSONRequests``,
the JSON-mode fallback), ``in_flight.py`` (``stop_generations``) and ``running.py`` (running a
coroutine from sync code, a store call in a pool thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import weakref
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import openai

from .config import LLMConfig, Role
from .errors import LLMStopped
from .failures import FailureReports, _AsyncOpenAI, _describe_attempt_failure
from .gate import OPEN_GATE, Priority, RequestGate
from .in_flight import _IN_FLIGHT
from .json_requests import JSONRequests
from .liveness import _backoff, _delta_text, _finish_reason, _GaveUp, _is_token, _Limits, _Progress, _StreamCut
from .modes import ModeStore, ProcessModeStore
from .running import _in_pool_thread, _run_coroutine
from .speeds import ProcessSpeedStore, SpeedStore

logger = logging.getLogger("legalmem.llm")

#: A chat message as the OpenAI API takes it: ``{"role": ..., "content": ...}``.
Message = Mapping[str, Any]


class LLMClient(JSONRequests, FailureReports):
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


__all__ = ["LLMClient"]
