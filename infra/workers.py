"""Is the worker holding a ``running`` job still alive? (docs/production.md "After a crash")

Turn jobs (``remember``) and document jobs (``documents``) share it. A worker that claims a job
records its host and pid and beats a heartbeat on the row every
``settings.TURN_HEARTBEAT_SECONDS`` while the job runs. The job is abandoned — and any process may
take it over at once — when its worker's pid is gone on this host, or when the heartbeat is
older than ``TURN_HEARTBEAT_MISSED_BEATS`` beats (a worker on another host, or a frozen one).
``TURN_LEASE_SECONDS`` stays the upper bound for any single run.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import psutil
from django.conf import settings
from django.db import connection
from django.utils import timezone

logger = logging.getLogger("legalmem.pipeline")

TURN_HEARTBEAT_MISSED_BEATS = 3
TURN_LEASE_SECONDS = 900.0  # the longest a single run may hold a job, whatever its heartbeat


def this_worker() -> tuple[str, int]:
    """The (host, pid) recorded on a job this process claims."""
    return socket.gethostname()[:255], os.getpid()


def heartbeat_cutoff(now: datetime) -> datetime:
    """A heartbeat older than this means the worker stopped beating."""
    return now - timedelta(seconds=settings.TURN_HEARTBEAT_SECONDS * TURN_HEARTBEAT_MISSED_BEATS)


def lease_cutoff(now: datetime) -> datetime:
    return now - timedelta(seconds=TURN_LEASE_SECONDS)


def holder_is_gone(turn, now: datetime, *, lease: bool = True) -> bool:
    """True when the worker that marked ``turn`` running (a turn job, or a document being read:
    anything with ``started_at``, ``worker_host``, ``worker_pid`` and ``heartbeat_at``) can no
    longer finish it. ``lease=False``: no upper bound on a run that still beats (a 500-page scan
    reads for longer than any lease)."""
    if turn.started_at is None or (lease and turn.started_at < lease_cutoff(now)):
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
def beating(name: str, beat: Callable[[datetime], object]) -> Iterator[None]:
    """Call ``beat(now)`` every ``settings.TURN_HEARTBEAT_SECONDS`` from a side thread (``name``) while
    the body runs; a failed beat is logged and retried at the next one. Inside a caller's
    transaction (the demo story runs turns that way) the claim is not visible to other processes
    until it commits, so there is nothing to beat, and a beat would wait on our lock."""
    if connection.in_atomic_block:
        yield
        return
    stop = threading.Event()
    thread = threading.Thread(target=_beat, args=(name, beat, stop), name=name, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=settings.TURN_HEARTBEAT_SECONDS + 5)


def _beat(name: str, beat: Callable[[datetime], object], stop: threading.Event) -> None:
    try:
        while not stop.wait(settings.TURN_HEARTBEAT_SECONDS):
            try:
                beat(timezone.now())
            except Exception:  # noqa: BLE001 - a missed beat is retried; the job itself goes on
                logger.warning("heartbeat %s failed", name, exc_info=True)
    finally:
        connection.close()  # this thread's own connection
