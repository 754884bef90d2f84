"""LLM client for any OpenAI-compatible server (DeepSeek, OpenAI, vLLM, Ollama,
llama.cpp server) over the official ``openai`` package.

Why a wrapper and not ``openai`` directly:

* Retries are ours (the package's own are disabled with ``max_retries=0``) so
  they are logged to ``legalmem.llm``, bounded by settings and testable
  against the fake server: 408/429/5xx, timeouts and connection errors are
  retried with exponential backoff, then :class:`LLMUnavailable` is raised.
* Structured output follows seed 001 §4: ask for ``json_schema``; a server
  that rejects it (400/422) is asked for ``json_object`` with the schema
  spelled out in the prompt (DeepSeek's JSON mode needs the word JSON in the
  prompt), then for a plain completion with the same prompt. The mode that
  worked is remembered per client so later calls start there.
* Replies are parsed strictly and validated against a small subset of JSON
  Schema; invalid output is retried, then :class:`LLMBadOutput` is raised —
  never silently turned into "no knowledge".
* Streaming is exposed as plain iterators of text deltas; the async one closes
  the HTTP stream when the consuming task is cancelled (a ``cancel`` frame or a
  websocket disconnect must stop generation on the server too).
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import re
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

import openai

from .errors import LLMBadOutput, LLMError, LLMRejected, LLMUnavailable
from .switch import llm_forced_offline

logger = logging.getLogger("legalmem.llm")

T = TypeVar("T")

#: A chat message as the OpenAI API takes it: ``{"role": ..., "content": ...}``.
Message = Mapping[str, Any]

#: System prompt for JSON requests (seed 001 uses exactly this one).
DEFAULT_JSON_SYSTEM = "You must respond with a JSON object."

#: Appended to the prompt when the server cannot enforce the schema itself
#: (seed 001 §4, verbatim).
SCHEMA_HINT_PREFIX = "\n\n仅返回一个合法 JSON 对象,匹配下面 schema (不要 markdown 代码块,不要任何解释):\n"

#: How much of a raw reply goes into error messages and logs.
RAW_EXCERPT_CHARS = 500

#: Upper bound for a server's ``Retry-After`` so a bad header can't park a worker.
MAX_RETRY_AFTER_SECONDS = 30.0

#: HTTP statuses that mean "the server refuses this response_format".
FORMAT_REJECTION_STATUSES = frozenset({400, 422})


class JSONMode(str, Enum):
    """How :meth:`LLMClient.complete_json` asks for JSON, in fallback order."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"
    PLAIN = "plain"


_MODE_ORDER: tuple[JSONMode, ...] = (JSONMode.JSON_SCHEMA, JSONMode.JSON_OBJECT, JSONMode.PLAIN)


@dataclass(frozen=True)
class LLMConfig:
    """Where the LLM server is and how patiently to talk to it."""

    base_url: str
    api_key: str = field(repr=False)
    model: str
    timeout_seconds: float = 60
    max_retries: int = 3
    backoff_seconds: float = 0.5

    @classmethod
    def from_settings(cls) -> LLMConfig | None:
        """Build from Django settings (``LLM_BASE_URL``, ``LLM_API_KEY``,
        ``LLM_MODEL``, ``LLM_TIMEOUT_SECONDS``, ``LLM_MAX_RETRIES``).

        Returns None when ``LLM_BASE_URL`` is empty: no LLM is configured and
        the offline engine is used instead.
        """
        from django.conf import settings
        from django.core.exceptions import ImproperlyConfigured

        base_url = str(getattr(settings, "LLM_BASE_URL", "") or "").strip()
        if not base_url or llm_forced_offline():
            return None
        model = str(getattr(settings, "LLM_MODEL", "") or "").strip()
        if not model:
            raise ImproperlyConfigured("LLM_MODEL must be set when LLM_BASE_URL is set.")
        timeout = getattr(settings, "LLM_TIMEOUT_SECONDS", None)
        retries = getattr(settings, "LLM_MAX_RETRIES", None)
        return cls(
            base_url=base_url,
            api_key=str(getattr(settings, "LLM_API_KEY", "") or ""),
            model=model,
            timeout_seconds=float(timeout) if timeout not in (None, "") else 60.0,
            max_retries=int(retries) if retries not in (None, "") else 3,
        )


class JSONReplyError(ValueError):
    """A reply is not a JSON object matching the schema (internal to retries;
    surfaces to callers as :class:`LLMBadOutput`)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


# --------------------------------------------------------------------------
# JSON parsing and validation
# --------------------------------------------------------------------------

_FENCE_RE = re.compile(r"\A```(?:json|JSON)?[ \t]*\r?\n(?P<body>.*?)\r?\n?[ \t]*```\Z", re.DOTALL)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _is_type(value: Any, name: str) -> bool:
    actual = _json_type(value)
    if name == "number":
        return actual in ("number", "integer")
    if name == "integer":
        return actual == "integer" or (actual == "number" and float(value).is_integer())
    if name in ("object", "array", "string", "boolean", "null"):
        return actual == name
    raise ValueError(f"unsupported JSON Schema type {name!r}")


def _json_equal(a: Any, b: Any) -> bool:
    """Equality without Python's ``True == 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    return bool(a == b)


def validate_json(instance: Any, schema: Mapping[str, Any], path: str = "$") -> list[str]:
    """Check ``instance`` against a small subset of JSON Schema and return the
    problems found (empty list = valid).

    Supported keywords: ``type`` (object, array, string, number, integer,
    boolean, null, or a list of them), ``required``, ``properties``, ``items``
    (one schema) and ``enum``. Other keywords are ignored, so a full schema can
    still be sent to servers that enforce it.
    """
    problems: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        types = [expected] if isinstance(expected, str) else list(expected)
        if not any(_is_type(instance, t) for t in types):
            problems.append(f"{path}: expected {' or '.join(types)}, got {_json_type(instance)}")
            return problems
    if "enum" in schema and not any(_json_equal(instance, option) for option in schema["enum"]):
        problems.append(f"{path}: {instance!r} is not one of {list(schema['enum'])!r}")
    if isinstance(instance, dict):
        for key in schema.get("required", ()):
            if key not in instance:
                problems.append(f"{path}: missing required key {key!r}")
        for key, subschema in (schema.get("properties") or {}).items():
            if key in instance and isinstance(subschema, Mapping):
                problems.extend(validate_json(instance[key], subschema, f"{path}.{key}"))
    if isinstance(instance, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(instance):
            problems.extend(validate_json(item, schema["items"], f"{path}[{index}]"))
    return problems


def parse_json_object(raw: str | None, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Parse a model reply strictly: optional surrounding whitespace and one
    ```json fence are removed, nothing else is repaired. The result must be a
    JSON object that passes :func:`validate_json`; otherwise
    :class:`JSONReplyError` lists what is wrong."""
    if raw is None:
        raise JSONReplyError(["empty reply (no content)"])
    text = raw.strip()
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    if not text:
        raise JSONReplyError(["empty reply"])
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONReplyError([f"not valid JSON: {exc}"]) from exc
    if not isinstance(value, dict):
        raise JSONReplyError([f"expected a JSON object, got {_json_type(value)}"])
    problems = validate_json(value, schema)
    if problems:
        raise JSONReplyError(problems)
    return value


def schema_hint(schema: Mapping[str, Any]) -> str:
    """The seed 001 instruction appended to prompts when the server does not
    enforce the schema itself."""
    return SCHEMA_HINT_PREFIX + json.dumps(schema, ensure_ascii=False)


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


def _is_transient(exc: BaseException) -> bool:
    """Worth retrying: timeouts, connection errors, 408, 429, 5xx, and errors
    reported inside a stream (no status)."""
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    return isinstance(exc, openai.APIError)


def _retry_after_seconds(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    try:
        value = headers.get("retry-after-ms")
        if value is not None:
            return float(value) / 1000.0
        value = headers.get("retry-after")
        if value is None:
            return None
        try:
            return float(value)
        except ValueError:
            when = email.utils.parsedate_to_datetime(value)
            return max(0.0, when.timestamp() - time.time())
    except (TypeError, ValueError, OverflowError):
        return None


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


def _message_text(completion: Any) -> str | None:
    """Content of a non-streamed completion, None if the reply has none."""
    choices = getattr(completion, "choices", None)
    if not choices:
        return None
    message = getattr(choices[0], "message", None)
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else None


class LLMClient:
    """Chat and structured-output calls against one OpenAI-compatible server.

    Thread-safe and cheap to share: the underlying ``openai`` clients are
    created lazily (one sync client, one async client per event loop).
    """

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        self._lock = threading.Lock()
        self._json_mode = JSONMode.JSON_SCHEMA
        self._sync_client: openai.OpenAI | None = None
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI] = (
            weakref.WeakKeyDictionary()
        )

    @classmethod
    def from_settings(cls) -> LLMClient | None:
        """A client for the configured server, or None when none is configured."""
        config = LLMConfig.from_settings()
        return cls(config) if config is not None else None

    def __repr__(self) -> str:
        return f"LLMClient(base_url={self.config.base_url!r}, model={self.config.model!r}, json_mode={self.json_mode.value!r})"

    # -- underlying openai clients -------------------------------------------------

    def _client_kwargs(self) -> dict[str, Any]:
        return {
            "base_url": self.config.base_url,
            # Local servers (vLLM, llama.cpp, Ollama) accept any key; the package
            # insists on one, "EMPTY" is the usual placeholder.
            "api_key": self.config.api_key or "EMPTY",
            "timeout": self.config.timeout_seconds,
            "max_retries": 0,  # retries are ours: logged and bounded by LLMConfig
        }

    @property
    def _sync(self) -> openai.OpenAI:
        with self._lock:
            if self._sync_client is None:
                self._sync_client = openai.OpenAI(**self._client_kwargs())
            return self._sync_client

    def _async(self) -> openai.AsyncOpenAI:
        """The async client bound to the running event loop (connection pools
        cannot be shared between loops)."""
        loop = asyncio.get_running_loop()
        with self._lock:
            client = self._async_clients.get(loop)
            if client is None:
                client = openai.AsyncOpenAI(**self._client_kwargs())
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

    # -- retry machinery -------------------------------------------------------------

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
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if response_format is not None:
            kwargs["response_format"] = dict(response_format)
        return kwargs

    def _backoff(self, attempt: int, exc: BaseException) -> float:
        """Exponential backoff (with 10% jitter), stretched to the server's
        Retry-After when it asks for longer."""
        delay = self.config.backoff_seconds * (2**attempt)
        retry_after = _retry_after_seconds(exc)
        if retry_after is not None:
            delay = max(delay, min(retry_after, MAX_RETRY_AFTER_SECONDS))
        return delay * (1.0 + 0.1 * random.random())

    def _failure(self, exc: BaseException, *, what: str, attempts: int) -> LLMError:
        """Translate a final ``openai`` failure into an :class:`LLMError`."""
        where = f"the language model server at {self.config.base_url}"
        status = _status_of(exc)
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
        elif status is not None:
            detail = f"HTTP {status}: {_server_message(exc)}"
        else:
            detail = _server_message(exc)
        return LLMUnavailable(
            f"{what}: {where} is unavailable ({detail}) after {tries}.", attempts=attempts, status_code=status
        )

    def _next_delay_or_raise(
        self, exc: BaseException, *, attempt: int, attempts: int, what: str, chunks_out: int = 0
    ) -> float:
        """Decide after a failed attempt: return the delay before the next try,
        or raise the final :class:`LLMError` (logged)."""
        if chunks_out:
            # Text already reached the caller: a retry would repeat it.
            err: LLMError = LLMUnavailable(
                f"{what}: the stream from {self.config.base_url} broke off after {chunks_out} chunks "
                f"({_server_message(exc)}).",
                attempts=attempt + 1,
                status_code=_status_of(exc),
            )
            logger.error("%s", err)
            raise err from exc
        if not _is_transient(exc):
            err = self._failure(exc, what=what, attempts=attempt + 1)
            logger.warning("%s", err)
            raise err from exc
        if attempt + 1 >= attempts:
            err = self._failure(exc, what=what, attempts=attempts)
            logger.error("%s", err)
            raise err from exc
        delay = self._backoff(attempt, exc)
        logger.warning(
            "%s failed (attempt %d/%d: %s: %s); retrying in %.2fs",
            what,
            attempt + 1,
            attempts,
            type(exc).__name__,
            _server_message(exc),
            delay,
        )
        return delay

    def _with_retries(self, op: Callable[[], T], *, what: str) -> T:
        attempts = self.config.max_retries + 1
        for attempt in range(attempts):
            try:
                return op()
            except openai.OpenAIError as exc:
                delay = self._next_delay_or_raise(exc, attempt=attempt, attempts=attempts, what=what)
            time.sleep(delay)
        raise AssertionError("unreachable")  # pragma: no cover

    # -- chat ------------------------------------------------------------------------

    def chat(
        self, messages: Sequence[Message], *, temperature: float | None = None, max_tokens: int | None = None
    ) -> str:
        """One non-streamed chat completion; returns the reply text."""
        return self._chat(messages, temperature=temperature, max_tokens=max_tokens) or ""

    def _chat(
        self,
        messages: Sequence[Message],
        *,
        temperature: float | None = None,
        max_tokens: int | None = None,
        response_format: Mapping[str, Any] | None = None,
        what: str = "chat completion",
    ) -> str | None:
        kwargs = self._chat_kwargs(
            messages, temperature=temperature, max_tokens=max_tokens, response_format=response_format
        )
        completion = self._with_retries(lambda: self._sync.chat.completions.create(**kwargs), what=what)
        return _message_text(completion)

    def stream_chat(
        self, messages: Sequence[Message], *, temperature: float | None = None, max_tokens: int | None = None
    ) -> Iterator[str]:
        """Stream a chat completion, yielding content deltas as they arrive.

        Failures before the first delta are retried; a failure after it raises
        :class:`LLMUnavailable` (retrying would repeat text already shown).
        Closing the iterator early closes the HTTP stream.
        """
        kwargs = self._chat_kwargs(messages, stream=True, temperature=temperature, max_tokens=max_tokens)
        attempts = self.config.max_retries + 1
        what = "streaming chat"
        for attempt in range(attempts):
            stream = None
            chunks_out = 0
            try:
                stream = self._sync.chat.completions.create(**kwargs)
                for chunk in stream:
                    text = _delta_text(chunk)
                    if text:
                        chunks_out += 1
                        yield text
                return
            except openai.OpenAIError as exc:
                delay = self._next_delay_or_raise(
                    exc, attempt=attempt, attempts=attempts, what=what, chunks_out=chunks_out
                )
            finally:
                if stream is not None:
                    stream.close()
            time.sleep(delay)

    async def astream_chat(
        self, messages: Sequence[Message], *, temperature: float | None = None, max_tokens: int | None = None
    ) -> AsyncIterator[str]:
        """Async :meth:`stream_chat` on ``openai.AsyncOpenAI``.

        Cancelling the task that consumes it (or ``aclose()`` on it) closes the
        HTTP stream, so the server stops generating.
        """
        client = self._async()
        kwargs = self._chat_kwargs(messages, stream=True, temperature=temperature, max_tokens=max_tokens)
        attempts = self.config.max_retries + 1
        what = "streaming chat"
        for attempt in range(attempts):
            stream = None
            chunks_out = 0
            try:
                stream = await client.chat.completions.create(**kwargs)
                async for chunk in stream:
                    text = _delta_text(chunk)
                    if text:
                        chunks_out += 1
                        yield text
                return
            except openai.OpenAIError as exc:
                delay = self._next_delay_or_raise(
                    exc, attempt=attempt, attempts=attempts, what=what, chunks_out=chunks_out
                )
            except asyncio.CancelledError:
                logger.info("%s cancelled after %d chunks; closing the stream", what, chunks_out)
                raise
            finally:
                if stream is not None:
                    await stream.close()
            await asyncio.sleep(delay)

    # -- structured output -------------------------------------------------------------

    @property
    def json_mode(self) -> JSONMode:
        """The response_format mode :meth:`complete_json` starts with."""
        return self._json_mode

    def _remember_mode(self, mode: JSONMode) -> None:
        """Move the starting mode forward (never back: a server that rejected a
        format keeps rejecting it)."""
        with self._lock:
            if _MODE_ORDER.index(mode) > _MODE_ORDER.index(self._json_mode):
                logger.info("LLM server %s: structured output mode is now %s", self.config.base_url, mode.value)
                self._json_mode = mode

    def complete_json(
        self,
        prompt: str,
        *,
        schema: Mapping[str, Any],
        schema_name: str,
        system: str = DEFAULT_JSON_SYSTEM,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> dict[str, Any]:
        """Ask for a JSON object matching ``schema`` and return it parsed.

        Fallback chain (seed 001 §4): ``json_schema`` → ``json_object`` with the
        schema in the prompt → plain request with the same prompt; each step
        only when the server rejects the previous format (HTTP 400/422).
        ``schema_name`` names the schema for ``json_schema`` (letters, digits,
        ``_`` and ``-``).

        Raises :class:`LLMBadOutput` when replies stay invalid after
        ``max_retries`` retries, :class:`LLMUnavailable` when the server keeps
        failing, :class:`LLMRejected` for other 4xx answers.
        """
        start = _MODE_ORDER.index(self.json_mode)
        for mode in _MODE_ORDER[start:]:
            try:
                result = self._complete_json_in_mode(
                    mode,
                    prompt,
                    schema=schema,
                    schema_name=schema_name,
                    system=system,
                    temperature=temperature,
                    max_tokens=max_tokens,
                )
            except LLMRejected as exc:
                if mode is JSONMode.PLAIN or exc.status_code not in FORMAT_REJECTION_STATUSES:
                    raise
                following = _MODE_ORDER[_MODE_ORDER.index(mode) + 1]
                logger.warning(
                    "LLM server %s rejected response_format=%s (HTTP %s); falling back to %s",
                    self.config.base_url,
                    mode.value,
                    exc.status_code,
                    following.value,
                )
                self._remember_mode(following)
                continue
            self._remember_mode(mode)
            return result
        raise AssertionError("unreachable")  # pragma: no cover

    def _complete_json_in_mode(
        self,
        mode: JSONMode,
        prompt: str,
        *,
        schema: Mapping[str, Any],
        schema_name: str,
        system: str,
        temperature: float | None,
        max_tokens: int | None,
    ) -> dict[str, Any]:
        """One mode of the chain: request, parse, validate; retry invalid
        output up to ``max_retries`` times."""
        response_format: dict[str, Any] | None
        if mode is JSONMode.JSON_SCHEMA:
            response_format = {"type": "json_schema", "json_schema": {"name": schema_name, "schema": dict(schema)}}
            user_content = prompt
        elif mode is JSONMode.JSON_OBJECT:
            response_format = {"type": "json_object"}
            user_content = prompt + schema_hint(schema)
        else:
            response_format = None
            user_content = prompt + schema_hint(schema)
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user_content}]
        what = f"JSON completion ({schema_name}, {mode.value})"

        attempts = self.config.max_retries + 1
        raw: str | None = None
        problems: list[str] = []
        for attempt in range(attempts):
            raw = self._chat(
                messages,
                temperature=temperature,
                max_tokens=max_tokens,
                response_format=response_format,
                what=what,
            )
            try:
                return parse_json_object(raw, schema)
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
    "JSONReplyError",
    "LLMClient",
    "LLMConfig",
    "parse_json_object",
    "schema_hint",
    "validate_json",
]
