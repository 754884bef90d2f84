"""Where the client remembers which structured-output mode works on a server.

``ProcessModeStore`` keeps it in the process (scripts and tests that build a client by
hand); ``memory.llm_stores.DatabaseModeStore`` keeps it in ``LLMServerMode`` rows so every
process and worker shares it — what ``LLMClient.from_settings`` uses, through
``infra.llm.shared`` (memory registers it from its ``AppConfig.ready``).
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from .structured import JSONMode


@dataclass(frozen=True)
class KnownMode:
    """The mode that worked on a server, and when the better modes were last tried."""

    mode: JSONMode
    probed_at: datetime


class ModeStore(Protocol):
    def load(self, base_url: str, model: str) -> KnownMode | None: ...

    def save(self, base_url: str, model: str, mode: JSONMode, *, error: str = "") -> None: ...


class ProcessModeStore:
    """Known modes in this process only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[tuple[str, str], KnownMode] = {}

    def load(self, base_url: str, model: str) -> KnownMode | None:
        with self._lock:
            return self._known.get((base_url, model))

    def save(self, base_url: str, model: str, mode: JSONMode, *, error: str = "") -> None:
        with self._lock:
            self._known[(base_url, model)] = KnownMode(mode, datetime.now(timezone.utc))
