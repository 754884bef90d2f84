"""Navigation graphs kept per process behind a version check, brought up to date in place.

Key: the visibility-set fingerprint (firm, user — profile and private case notes are
owner-only —, the matters the user is assigned to in that firm, and the page filters).
Version: (count, max(updated_at), max(stored_at)) of the notes in that set, read from the
database on every request with one aggregate query. Same version → the cached graph. Another
version → ``refresh(previous)`` is called with this process's graph of the older version (or
None) and brings it up to date: from the stored snapshot, by an incremental update, or by a
full build (navigation.freshness decides, and says which, so ``stats`` counts each kind).

Multi-process: every server process keeps its own LRU (``NAV_CACHE_ENTRIES`` graphs) and
checks the version against PostgreSQL, so none serves a stale or wider graph; the graph of a
version is shared between processes through NavigationGraphSnapshot (``accept`` lets the
caller swap a graph this process made for the stored one of the same version).
"""
from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Hashable

_entries: "OrderedDict[Hashable, tuple[Hashable, object]]" = OrderedDict()
_lock = threading.Lock()
_building: dict[Hashable, threading.Lock] = {}
KINDS = ("builds", "incremental", "snapshots", "unchanged")
stats = {"hits": 0, **{kind: 0 for kind in KINDS}}


def _current(key: Hashable, version: Hashable, accept: Callable[[object], bool]) -> object | None:
    with _lock:
        found = _entries.get(key)
        if found is None or found[0] != version:
            return None
        _entries.move_to_end(key)
    return found[1] if accept(found[1]) else None


def get_or_refresh(key: Hashable, version: Hashable, refresh: Callable[[object | None], tuple[object, str]], *,
                   capacity: int, accept: Callable[[object], bool] = lambda value: True) -> object:
    """The cached value for ``key`` at ``version``; otherwise ``refresh(previous value or None)``
    → (value, kind), run once per key at a time, counted in ``stats[kind]``."""
    value = _current(key, version, accept)
    if value is not None:
        with _lock:
            stats["hits"] += 1
        return value
    with _lock:
        key_lock = _building.setdefault(key, threading.Lock())
    with key_lock:
        value = _current(key, version, accept)
        if value is not None:
            with _lock:
                stats["hits"] += 1
            return value
        with _lock:
            found = _entries.get(key)
        value, kind = refresh(found[1] if found is not None else None)
        with _lock:
            stats[kind] += 1
            _entries[key] = (version, value)
            _entries.move_to_end(key)
            while len(_entries) > capacity:
                _entries.popitem(last=False)
        return value


def clear() -> None:
    with _lock:
        _entries.clear()
        stats.update({"hits": 0, **{kind: 0 for kind in KINDS}})
