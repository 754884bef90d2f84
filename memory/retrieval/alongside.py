"""Reads that run on a second database connection while the request's own connection works.

A layered search's note statement and its raw-message statements are independent reads; on one
connection they queue behind each other. ``run_alongside`` runs a read on a worker thread,
which opens its own connection (Django connections are per thread) and closes it when the read
is done (the project keeps no persistent connections: ``CONN_MAX_AGE = 0``).

A second connection only sees committed rows, so inside a transaction (a service that writes
and then searches, or a test wrapped in one) the read runs inline instead, on the caller's
connection: same statements, same visibility rules, same answer (docs/performance.md, Search).
"""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, TypeVar

from django.conf import settings
from django.db import connection, connections

T = TypeVar("T")

# One read per running search; a few searches at once (Daphne's thread pool) each get a worker.
_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="search-read")


def can_run_alongside() -> bool:
    """Whether a second connection would see what the caller sees (no open transaction) and
    the deployment allows it (``SEARCH_PARALLEL_READS``)."""
    return settings.SEARCH_PARALLEL_READS and not connection.in_atomic_block


def _on_own_connection(read: Callable[[], T]) -> T:
    try:
        return read()
    finally:
        connections.close_all()  # this worker thread's connection only


def run_alongside(read: Callable[[], T]) -> Callable[[], T]:
    """Start ``read`` on a worker thread with its own connection when that is safe; the returned
    function gives its answer (or raises what it raised). When it is not safe, the read runs
    on the caller's connection when its answer is asked for — the order a single connection
    would have used."""
    if not can_run_alongside():
        return read
    future: Future[T] = _pool.submit(_on_own_connection, read)
    return future.result
