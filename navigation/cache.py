"""Built navigation graphs, kept per process behind a version check.

Key: the visibility-set fingerprint (firm, user — profile and private case notes are
owner-only —, the matters the user is assigned to in that firm, and the page filters).
Version: (count, max(updated_at), max(stored_at)) of the notes in that set, read from the
database on every request with one aggregate query. A note added, changed or deleted
changes the version, so the next request rebuilds; nothing is ever served stale.

Multi-process: every server process keeps its own LRU (``NAV_CACHE_ENTRIES`` graphs) and
checks the version against PostgreSQL, so processes never disagree about what a user may
see; the build is deterministic, so two processes that build the same set build the same
graph and return the same trace. The cost is one build per process per version. No state
is shared through memory and none is required.
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Hashable

_entries: "OrderedDict[Hashable, tuple[Hashable, object]]" = OrderedDict()
_lock = threading.Lock()
_building: dict[Hashable, threading.Lock] = {}
stats = {"builds": 0, "hits": 0}


def get_or_build(key: Hashable, version: Hashable, build: Callable[[], object], *, capacity: int) -> object:
    """The cached value for ``key`` at ``version``, building it (once per key at a time) if needed."""
    with _lock:
        found = _entries.get(key)
        if found is not None and found[0] == version:
            _entries.move_to_end(key)
            stats["hits"] += 1
            return found[1]
        key_lock = _building.setdefault(key, threading.Lock())
    with key_lock:
        with _lock:
            found = _entries.get(key)
            if found is not None and found[0] == version:
                _entries.move_to_end(key)
                stats["hits"] += 1
                return found[1]
        value = build()
        with _lock:
            stats["builds"] += 1
            _entries[key] = (version, value)
            _entries.move_to_end(key)
            while len(_entries) > capacity:
                _entries.popitem(last=False)
        return value


def clear() -> None:
    with _lock:
        _entries.clear()
        stats.update(builds=0, hits=0)
