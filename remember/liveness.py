"""Is the worker holding a ``running`` turn job still alive? (docs/production.md "After a crash")

A worker that claims a job records its host and pid and beats a heartbeat on the row every
``TURN_HEARTBEAT_SECONDS`` while the job runs. The job is abandoned — and any process may
take it over at once — when its worker's pid is gone on this host, or when the heartbeat is
older than ``TURN_HEARTBEAT_MISSED_BEATS`` beats (a worker on another host, or a frozen one).
``TURN_LEASE_SECONDS`` stays the upper bound for any single run.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import psutil
from django.db import connection
from django.utils import timezone

logger = logging.getLogger("legalmem.pipeline")

# A killed worker's job is taken over in ~10 s by an idle run_worker with a 10 s beat
# (docs/production.md, "After a crash"; bench/bench_takeover.py).
TURN_HEARTBEAT_SECONDS = 10.0
TURN_HEARTBEAT_MISSED_BEATS = 3
TURN_LEASE_SECONDS = 900.0  # the longest a single run may hold a job, whatever its heartbeat


def this_worker() -> tuple[str, int]:
    """The (host, pid) recorded on a job this process claims."""
    return socket.gethostname()[:255], os.getpid()


def heartbeat_cutoff(now: datetime) -> datetime:
    """A heartbeat older than this means the worker stopped beating."""
    return now - timedelta(seconds=TURN_HEARTBEAT_SECONDS * TURN_HEARTBEAT_MISSED_BEATS)


def lease_cutoff(now: datetime) -> datetime:
    return now - timedelta(seconds=TURN_LEASE_SECONDS)


def holder_is_gone(turn, now: datetime) -> bool:
    """True when the worker that marked ``turn`` running can no longer finish it."""
    if turn.started_at is None or turn.started_at < lease_cutoff(now):
        return True
    if turn.worker_host and turn.worker_host == socket.gethostname()[:255] and turn.worker_pid:
        if not _process_alive(turn.worker_pid):
            return True
    if turn.heartbeat_at is not None:
        return turn.heartbeat_at < heartbeat_cutoff(now)
    return False  # a job claimed before heartbeats existed: only the lease applies


def _process_alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.AccessDenied:
        return True  # it exists, under another user
    except (psutil.NoSuchProcess, ValueError):
        return False


@contextmanager
def heartbeat(*turn_ids: int) -> Iterator[None]:
    """Beat the heartbeat of the jobs this process holds among ``turn_ids`` from a side thread
    while the body runs. Inside a caller's transaction (the demo story runs turns that way) the
    claim is not visible to other processes until it commits, so there is nothing to beat, and
    a beat would wait on our lock."""
    if connection.in_atomic_block or not turn_ids:
        yield
        return
    stop = threading.Event()
    name = f"turn-{turn_ids[0]}-heartbeat" if len(turn_ids) == 1 else f"{len(turn_ids)}-turns-heartbeat"
    thread = threading.Thread(target=_beat, args=(list(turn_ids), stop), name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=TURN_HEARTBEAT_SECONDS + 5)


def _beat(turn_ids: list[int], stop: threading.Event) -> None:
    from memory.services.turn_extractions import turn_extractions_beat

    host, pid = this_worker()
    try:
        while not stop.wait(TURN_HEARTBEAT_SECONDS):
            try:
                turn_extractions_beat(turn_ids, host=host, pid=pid, at=timezone.now())
            except Exception:  # noqa: BLE001 - a missed beat is retried; the job itself goes on
                logger.warning("heartbeat of turns %s failed", turn_ids[:5], exc_info=True)
    finally:
        connection.close()  # this thread's own connection
