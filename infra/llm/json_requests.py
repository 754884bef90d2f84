"""The LLM client's structured output (seed 001 §4): a JSON object asked for in the best mode the
server takes — ``json_schema`` → ``json_object`` with an example reply → plain — the mode that
worked remembered per server and probed again after ``settings.LLM_JSON_MODE_REPROBE_SECONDS``, invalid
replies asked again with what was wrong.

``JSONRequests`` is the part of ``LLMClient`` that does it on top of the client's streamed
completion (``_chat``); parsing, validation and the prompts' hints are in ``structured.py``.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from infra import metrics

from .config import LLMConfig
from .errors import LLMBadOutput, LLMFormatRejected
from .failures import _truncate
from .modes import KnownMode, ModeStore
from .structured import MODE_ORDER, JSONMode, JSONReplyError, parse_json_object, retry_hint, schema_hint

logger = logging.getLogger("legalmem.llm")

#: System prompt for JSON requests (seed 001 uses exactly this one).
DEFAULT_JSON_SYSTEM = "You must respond with a JSON object."


@dataclass(frozen=True)
class JSONReply:
    """What :meth:`LLMClient.ask_json` got: the object, the JSON mode that produced it, how
    many replies were asked for in that mode, and the modes the server refused on the way."""

    data: dict[str, Any]
    mode: JSONMode
    attempts: int
    refused: tuple[str, ...] = ()


class JSONRequests:
    """A base of :class:`~infra.llm.client.LLMClient` (not used alone): JSON requests with the
    mode fallback, over the client's ``_chat``."""

    config: LLMConfig
    modes: ModeStore
    _chat: Callable[..., str]

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

        Every reply is streamed; see the :mod:`infra.llm.client` docstring for the bounds of a
        request.

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


__all__ = ["DEFAULT_JSON_SYSTEM", "JSONReply", "JSONRequests"]
