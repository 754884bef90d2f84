"""The stores ``LLMClient.from_settings`` remembers servers in, shared by every process.

infra does not reach LegalMem's tables: the app that owns them (``memory``: ``LLMServerMode``,
``LLMServerSpeed``) registers its stores here from its ``AppConfig.ready()``. Until one is
registered (a script without Django apps) each client keeps what it learns in its process.
"""
from __future__ import annotations

from typing import Callable

from .modes import ModeStore, ProcessModeStore
from .speeds import ProcessSpeedStore, SpeedStore

_mode_store: Callable[[], ModeStore] | None = None
_speed_store: Callable[[], SpeedStore] | None = None


def register_shared_stores(*, modes: Callable[[], ModeStore], speeds: Callable[[], SpeedStore]) -> None:
    """Make ``modes()`` / ``speeds()`` the stores of every client built from settings."""
    global _mode_store, _speed_store
    _mode_store, _speed_store = modes, speeds


def shared_mode_store() -> ModeStore:
    return _mode_store() if _mode_store is not None else ProcessModeStore()


def shared_speed_store() -> SpeedStore:
    return _speed_store() if _speed_store is not None else ProcessSpeedStore()
