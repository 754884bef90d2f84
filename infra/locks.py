"""Serialising a check-then-write across processes: a PostgreSQL advisory lock held until the
current transaction ends (several servers and workers share one database; docs/operations.md,
"Several servers and workers")."""
from __future__ import annotations

import zlib

from django.db import connection


def lock_for_transaction(name: str, object_id: int) -> None:
    """Wait for, then hold until commit or rollback, the lock of (``name``, ``object_id``) — e.g.
    one user's rate limit, one firm's navigation refresh. Call inside ``transaction.atomic``."""
    assert connection.in_atomic_block, "an advisory transaction lock outside a transaction ends at once"
    namespace = zlib.crc32(name.encode()) - 2**31  # int4, as pg_advisory_xact_lock(int, int) takes
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [namespace, object_id % 2**31])
