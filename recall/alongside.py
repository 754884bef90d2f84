"""Reads that run on a second database connection while the request's own connection works.

A layered search's note statement and its raw-message statements are independent reads; on one
connection they queue behind each other. ``run_alongside`` runs a read on one of a few worker
threads, each with its own connection (Django connections are per thread).

The workers KEEP their connections between searches. Closing after each read (one fresh backend
per search) made the note statement cost 33 ms instead of 13 ms at 100k notes — a new backend
loads its catalog caches and plans the statement cold — which was slower than one connection
(docs/performance.md, Search). A kept connection is checked before it is used again after
``settings.SEARCH_READ_IDLE_CHECK_SECONDS`` (a server restart, an idle timeout) and dropped after
a failed read; ``close_read_connections`` closes them all (a test session, before its database is dropped).

A second connection only sees committed rows, so inside a transaction (a service that writes
and then searches, or a test wrapped in one) the read runs on the caller's connection when
its answer is needed: same statements, same visibility rules, same answer.
"""
from __future__ import annotations

import threading
import time
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, TypeVar

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connection, connections

T = TypeVar("T")

# A search runs up to three reads here (its note statement, the case layer read apart, its document
# passages); a second search at once queues for a free worker. Size the database's connections
# for them (SEARCH_PARALLEL_READS in docs/configuration.md).
WORKERS = 4

_pool = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="search-read")
_kept: "weakref.WeakSet" = weakref.WeakSet()
_kept_lock = threading.Lock()
_worker = threading.local()


def can_run_alongside() -> bool:
    """Whether a second connection would see what the caller sees (no open transaction) and
    the deployment allows it (``SEARCH_PARALLEL_READS``)."""
    return settings.SEARCH_PARALLEL_READS and not connection.in_atomic_block


def _on_kept_connection(read: Callable[[], T]) -> T:
    wrapper = connections[DEFAULT_DB_ALIAS]  # this worker thread's own
    last_used = getattr(_worker, "last_used", 0.0)
    if wrapper.connection is not None and time.monotonic() - last_used > settings.SEARCH_READ_IDLE_CHECK_SECONDS and not wrapper.is_usable():
        wrapper.close()
    try:
        return read()
    except BaseException:
        wrapper.close()  # its state is unknown after a failure: the next read opens a fresh one
        raise
    finally:
        _worker.last_used = time.monotonic()
        if wrapper.connection is not None:
            with _kept_lock:
                _kept.add(wrapper)


def run_alongside(read: Callable[[], T]) -> Callable[[], T]:
    """Start ``read`` on a worker thread with its own connection when that is safe; the returned
    function gives its answer (or raises what it raised). When it is not safe, the read runs
    on the caller's connection when its answer is asked for — the order a single connection
    would have used."""
    if not can_run_alongside():
        return read
    future: Future[T] = _pool.submit(_on_kept_connection, read)
    return future.result


def close_read_connections() -> None:
    """Close the connections the workers keep. Call it when no search is running (the end of a
    test session, before its database is dropped; a worker reopens one on its next read)."""
    with _kept_lock:
        kept = list(_kept)
        _kept.clear()
    for wrapper in kept:
        wrapper.inc_thread_sharing()  # closed from this thread, not the worker's
        try:
            wrapper.close()
        finally:
            wrapper.dec_thread_sharing()
