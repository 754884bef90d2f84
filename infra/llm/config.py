"""Which server the LLM client talks to and how patiently: a client's ``Role`` and its
``LLMConfig``, read from Django settings by ``LLMConfig.from_settings`` at run time.

A deployment sets the server and its timeouts (environment variables, docs/llm-servers.md,
"Settings"). The retries, the extraction's ``max_tokens`` and the JSON-mode reprobe interval are
tuning, not configuration: Django settings with one declaration in the "Tuning" section of
legalmem_site/settings.py (never environment variables), which a test changes with the
``settings`` fixture. The budget's ceiling is a constant here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .switch import llm_forced_offline

#: Default interval before a server whose ``json_schema`` failed is asked for it again.
DEFAULT_REPROBE_SECONDS = 86400.0

#: Defaults of ``LLM_TIMEOUT_SECONDS`` (first token; the budget's floor), ``LLM_STALL_SECONDS``
#: (longest silence between tokens) and ``LLM_MAX_REQUEST_SECONDS`` (the budget's ceiling).
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_STALL_SECONDS = 30.0
DEFAULT_MAX_REQUEST_SECONDS = 1800.0

# Tuning of the client for every server (docs/llm-servers.md, "Budgets": at 3 tokens/s a llama.cpp
# extraction's budget is ~810 s, inside the ceiling).
#: The ceiling of one request's budget, and its budget while the server's speed is unknown.
LLM_MAX_REQUEST_SECONDS = DEFAULT_MAX_REQUEST_SECONDS

#: A request's budget allows this many times the generation time its ``max_tokens`` need at
#: the measured speed (on top of the floor): a shared server slows down under load.
BUDGET_SPEED_MARGIN = 2.0


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
        ``LLM_TIMEOUT_SECONDS``, ``LLM_STALL_SECONDS``, ``LLM_MAX_RETRIES``,
        ``LLM_JSON_MODE_REPROBE_SECONDS``) and this module's ``LLM_MAX_REQUEST_SECONDS``.

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


__all__ = [
    "BUDGET_SPEED_MARGIN",
    "DEFAULT_MAX_REQUEST_SECONDS",
    "DEFAULT_REPROBE_SECONDS",
    "DEFAULT_STALL_SECONDS",
    "DEFAULT_TIMEOUT_SECONDS",
    "LLM_MAX_REQUEST_SECONDS",
    "LLMConfig",
    "Role",
]
