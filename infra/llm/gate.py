"""How many requests the product sends to one LLM server at once, across every process,
and who goes first.

A llama.cpp server runs one request at a time and cuts a running stream short when
another request arrives; a hosted API rate-limits. ``LLM_MAX_CONCURRENT_REQUESTS`` bounds
the requests in flight to a server: a counting semaphore of PostgreSQL advisory locks
(slot ``i`` is the session lock ``(server key, i)``), so it holds across server processes
and background workers with no extra service. Each lease uses its own short-lived
database connection; closing it releases the slot, so a crashed process or a cancelled
chat can never keep one.

Chat goes first: a chat request holds a shared "chat present" lock while it waits and
while it runs, and background work (extraction, stories) takes no slot while that lock is
held by anyone.
"""
from __future__ import annotations

import asyncio
import logging
import threading
import time
import zlib
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from enum import StrEnum
from typing import Any

from .errors import LLMUnavailable

logger = logging.getLogger("legalmem.llm")

#: Slot 0 of a server's key is the "chat present" lock; request slots are 1..N.
CHAT_PRESENT_SLOT = 0
POLL_SECONDS = 0.05


class Priority(StrEnum):
    CHAT = "chat"
    BACKGROUND = "background"


def server_key(base_url: str) -> int:
    """A stable int4 advisory-lock key for one server URL."""
    return zlib.crc32(base_url.rstrip("/").encode("utf-8")) & 0x7FFFFFFF


class Lease:
    """A held slot (or nothing, for an open gate); ``release()`` gives it back."""

    def __init__(self, connection: Any = None, slot: int | None = None) -> None:
        self.connection = connection
        self.slot = slot

    def release(self) -> None:
        connection, self.connection = self.connection, None
        if connection is not None:
            try:
                connection.close()  # ends the session: its advisory locks are released
            except Exception:  # noqa: BLE001 - a broken connection holds no lock either
                logger.debug("closing an LLM slot connection failed", exc_info=True)


def django_connect() -> Any:
    """A new autocommit psycopg connection to Django's default database (not Django's own
    connection: a lease must not share a session with the ORM's transactions)."""
    import psycopg
    from django.db import connections

    params = connections["default"].settings_dict
    options = {
        k: v for k, v in (params.get("OPTIONS") or {}).items()
        if k not in ("pool", "server_side_binding", "isolation_level", "assume_role", "cursor_factory")
    }
    kwargs = {
        "dbname": params.get("NAME"), "user": params.get("USER") or None, "password": params.get("PASSWORD") or None,
        "host": params.get("HOST") or None, "port": params.get("PORT") or None,
    }
    return psycopg.connect(autocommit=True, **{k: v for k, v in kwargs.items() if v}, **options)


class RequestGate:
    """At most ``slots`` requests to the server at ``base_url`` at once; 0 = no limit."""

    def __init__(
        self, slots: int, *, base_url: str = "", wait_seconds: float = 600.0,
        connect: Callable[[], Any] = django_connect,
    ) -> None:
        self.slots = max(0, int(slots))
        self.key = server_key(base_url)
        self.wait_seconds = wait_seconds
        self._connect = connect

    def __repr__(self) -> str:
        return f"RequestGate(slots={self.slots}, key={self.key})"

    # -- sync ---------------------------------------------------------------------------

    def acquire(self, priority: Priority, cancelled: threading.Event | None = None) -> Lease:
        """Wait for a free slot (background work also waits while any chat is present).
        Raises :class:`LLMUnavailable` after ``wait_seconds``."""
        if not self.slots:
            return Lease()
        try:
            connection = self._connect()
        except Exception as exc:  # noqa: BLE001 - whatever the driver raises, the request cannot go
            raise LLMUnavailable(f"cannot take an LLM request slot: the database is unreachable ({exc})") from exc
        try:
            if priority is Priority.CHAT:
                connection.execute("SELECT pg_advisory_lock_shared(%s, %s)", (self.key, CHAT_PRESENT_SLOT))
            deadline = time.monotonic() + self.wait_seconds
            while True:
                if cancelled is not None and cancelled.is_set():
                    raise asyncio.CancelledError
                if priority is Priority.CHAT or self._no_chat_present(connection):
                    slot = self._try_slots(connection)
                    if slot is not None:
                        return Lease(connection, slot)
                if time.monotonic() >= deadline:
                    raise LLMUnavailable(
                        f"all {self.slots} LLM request slot(s) stayed busy for {self.wait_seconds:g}s", attempts=0
                    )
                time.sleep(POLL_SECONDS)
        except BaseException:
            Lease(connection).release()
            raise

    def _no_chat_present(self, connection: Any) -> bool:
        row = connection.execute(
            "SELECT pg_try_advisory_lock(%s, %s)", (self.key, CHAT_PRESENT_SLOT)
        ).fetchone()
        if row[0]:
            connection.execute("SELECT pg_advisory_unlock(%s, %s)", (self.key, CHAT_PRESENT_SLOT))
            return True
        return False

    def _try_slots(self, connection: Any) -> int | None:
        for slot in range(1, self.slots + 1):
            if connection.execute("SELECT pg_try_advisory_lock(%s, %s)", (self.key, slot)).fetchone()[0]:
                return slot
        return None

    @contextmanager
    def hold(self, priority: Priority) -> Iterator[Lease]:
        lease = self.acquire(priority)
        try:
            yield lease
        finally:
            lease.release()

    # -- async ----------------------------------------------------------------------------

    @asynccontextmanager
    async def ahold(self, priority: Priority) -> AsyncIterator[Lease]:
        """``hold`` for async code: the wait runs in a worker thread; cancelling the
        waiting task stops the wait and closes its connection, so no slot leaks."""
        if not self.slots:
            yield Lease()
            return
        cancelled = threading.Event()
        waiting = asyncio.ensure_future(asyncio.to_thread(self.acquire, priority, cancelled))
        try:
            lease = await asyncio.shield(waiting)
        except asyncio.CancelledError:
            cancelled.set()
            try:
                leaked = await waiting
            except BaseException:  # noqa: BLE001 - the wait ended without a slot
                leaked = None
            if leaked is not None:
                await asyncio.to_thread(leaked.release)
            raise
        try:
            yield lease
        finally:
            await asyncio.shield(asyncio.to_thread(lease.release))


#: The gate of a client with no limit (tests and scripts that build a client by hand).
OPEN_GATE = RequestGate(0)
