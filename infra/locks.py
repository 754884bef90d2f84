"""Serialising a check-then-write across processes: a PostgreSQL advisory lock held until the
current transaction ends (several servers and workers share one database; docs/operations.md,
"Several servers and workers")."""
from __future__ import annotations

import zlib

from django.conf import settings
from django.db import connection

# A transaction that holds a lock and then sends nothing for ``settings.LOCK_FROZEN_HOLDER_SECONDS``
# belongs to a frozen process (SIGSTOP, a suspended VM): PostgreSQL ends its session so the lock
# goes back to the others. Every transaction that takes one of these locks is a few quick statements.


def lock_for_transaction(name: str, object_id: int) -> None:
    """Wait for, then hold until commit or rollback, the lock of (``name``, ``object_id``) — e.g.
    one user's rate limit, one firm's navigation refresh. Call inside ``transaction.atomic``."""
    assert connection.in_atomic_block, "an advisory transaction lock outside a transaction ends at once"
    release_if_frozen()
    namespace = zlib.crc32(name.encode()) - 2**31  # int4, as pg_advisory_xact_lock(int, int) takes
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [namespace, object_id % 2**31])


def release_if_frozen() -> None:
    """If this process stops between two statements of the current transaction, PostgreSQL ends
    its session after ``settings.LOCK_FROZEN_HOLDER_SECONDS``, so the locks the transaction holds (advisory
    locks, a claimed job's row) do not stop every other worker for ever. Only this transaction:
    the setting goes back at commit or rollback. Call inside ``transaction.atomic``. Inside a
    caller's longer transaction (the demo story runs turns in one, LLM calls included) nothing
    changes: that caller may legitimately be quiet for minutes."""
    assert connection.in_atomic_block, "a setting for the current transaction outside a transaction ends at once"
    if len(connection.atomic_blocks) > 1:
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT set_config('idle_in_transaction_session_timeout', %s, true)",
                       [f"{round(settings.LOCK_FROZEN_HOLDER_SECONDS * 1000)}ms"])
