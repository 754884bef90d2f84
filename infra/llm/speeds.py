"""Where the client remembers how fast a server generates (tokens per second), so the budget
of a request follows the server it goes to instead of one fixed timeout.

``ProcessSpeedStore`` keeps it in the process (scripts and tests that build a client by hand);
``memory.llm_stores.DatabaseSpeedStore`` keeps it in ``LLMServerSpeed`` rows so the chat server
and every worker share it — what ``LLMClient.from_settings`` uses, through ``infra.llm.shared``. Speeds are measured on streamed replies:
tokens (content chunks) between the first and the last one, over the time between them, so
the prompt's reading time does not count (``LLM_TIMEOUT_SECONDS`` covers that).
"""
from __future__ import annotations

import threading
from typing import Protocol


def blend(previous: float | None, measured: float) -> float:
    """The speed to remember after a new measurement: the mean of the previous speed and the
    new one (the first measurement as it is)."""
    return measured if previous is None else (previous + measured) / 2


class SpeedStore(Protocol):
    def load(self, base_url: str, model: str) -> float | None: ...

    def record(self, base_url: str, model: str, tokens_per_second: float) -> None: ...


class ProcessSpeedStore:
    """Speeds in this process only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str], float] = {}

    def load(self, base_url: str, model: str) -> float | None:
        with self._lock:
            return self._known.get((base_url, model))

    def record(self, base_url: str, model: str, tokens_per_second: float) -> None:
        with self._lock:
            key = (base_url, model)
            self._known[key] = blend(self._known.get(key), tokens_per_second)
