"""What other apps erase along with a unit of memory's data (docs/records.md, Erasure).

An app that keeps copies of notes in tables of its own (navigation's stored graphs) registers a
hook from its ``AppConfig.ready()``; ``records.erasure`` runs every hook inside the erasure's
transaction, reports what each removed under the hook's name, and runs its ``after_commit``
once the erasure is committed. The registry lives here, below both, so that neither app imports
the other (the way navigation offers ``layered_nav`` through ``recall.register_strategy``).

Content kept in a process's memory (the latest search texts and their vectors, kept note
vectors, statements read from notes) is forgotten in **every** process, not only the one that
erased: a module that keeps such a cache registers its ``clear`` with
``register_cached_content``, and each process compares the newest erasure's id with the last
one it saw on every search (one column of the statement the search runs first) and before each
background job, forgetting everything registered when it moved (docs/records.md).
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import connection

from infra.embeddings import recent_queries
from memory.models import AuditEvent


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


# --- content cached in memory, forgotten in every process after an erasure ---

#: The newest erasure's id (0 before the first), as one SQL expression: the audit log's partial
#: index on erased entries answers it without reading the log.
LATEST_ERASURE_SQL = f"(SELECT coalesce(max(id), 0) FROM memory_auditlog WHERE event_type = '{AuditEvent.ERASED.value}')"

_cached_content: dict[str, Callable[[], None]] = {"recent_queries": recent_queries.clear}
_seen_erasure: int | None = None


def register_cached_content(name: str, clear: Callable[[], None]) -> None:
    """``clear()`` forgets what a module keeps in memory (registering a name again replaces it)."""
    with _lock:
        _cached_content[name] = clear


def forget_cached_content() -> list[str]:
    """Run every registered ``clear`` and every hook's ``after_commit``; returns their names."""
    with _lock:
        clears = [*_cached_content.items(),
                  *((hook.name, hook.after_commit) for hook in _hooks.values() if hook.after_commit is not None)]
    for _name, clear in clears:
        clear()
    return [name for name, _clear in clears]


def follow_erasures(latest: int) -> bool:
    """Forget this process's cached content when ``latest`` (the newest erasure's id, read by
    the caller) is newer than the last one seen; True when it did. The first call of a process
    only takes note: searches and jobs, which fill the caches, each make this check first."""
    global _seen_erasure
    with _lock:
        first, moved = _seen_erasure is None, _seen_erasure is not None and latest > _seen_erasure
        if first or moved:
            _seen_erasure = latest
    if moved:
        forget_cached_content()
    return moved


def latest_erasure() -> int:
    """The newest erasure's id (one indexed read), for a caller that runs no statement of its own."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {LATEST_ERASURE_SQL}")
        return cursor.fetchone()[0]
