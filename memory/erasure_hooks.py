"""What other apps erase along with a unit of memory's data (docs/records.md, Erasure).

An app that keeps copies of notes in tables of its own (navigation's stored graphs) registers a
hook from its ``AppConfig.ready()``; ``records.erasure`` runs every hook inside the erasure's
transaction, reports what each removed under the hook's name, and runs its ``after_commit``
once the erasure is committed. The registry lives here, below both, so that neither app imports
the other (the way navigation offers ``layered_nav`` through ``recall.register_strategy``).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ErasureHook:
    name: str  # the count it reports, e.g. "navigation_snapshots"
    erase: Callable[[Any], int]  # (records.erasure.Unit) → rows removed; runs in the erasure's transaction
    after_commit: Callable[[], None] | None = None  # e.g. forget what the process cached


_hooks: dict[str, ErasureHook] = {}
_lock = threading.Lock()


def register_erasure_hook(name: str, erase: Callable[[Any], int], *,
                          after_commit: Callable[[], None] | None = None) -> None:
    """Run ``erase(unit)`` in every erasure (registering a name again replaces its hook)."""
    with _lock:
        _hooks[name] = ErasureHook(name, erase, after_commit)


def unregister_erasure_hook(name: str) -> None:
    with _lock:
        _hooks.pop(name, None)


def erasure_hooks() -> list[ErasureHook]:
    """The registered hooks, in the order they were first registered."""
    with _lock:
        return list(_hooks.values())
