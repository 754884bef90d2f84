"""After an erasure: the erased rows' bytes out of the table, index and WAL files.

A DELETE only marks a row version dead, and plain VACUUM only marks its space free: the bytes
stay in the table, TOAST and index files until something overwrites them, and in the WAL
segments that logged them. ``compact_after_erasure`` rewrites the tables an erasure touches
(``VACUUM (FULL, ANALYZE)``: a new file of the live rows, indexes rebuilt, the old files
unlinked; ANALYZE replaces the column statistics, which sample values), rewrites
``pg_statistic`` (whose old rows sampled the erased text), then switches to a new WAL segment
and checkpoints twice, so every segment that logged the erased rows is older than the last
checkpoint's redo point and is removed (``wal_recycle = off`` on the embedded server: removed,
not renamed for reuse). docs/records.md, "Physical removal", says why this and not per-firm keys.

Runs outside any transaction (VACUUM cannot run in one), after the erasure committed. A row
version that another session's snapshot may still see is "recently dead": VACUUM FULL copies it
into the new file. So compaction first waits (at most ``SNAPSHOT_WAIT_SECONDS``) for every other
session of the database whose transaction began before the erasure committed — and for every
writing transaction of another database on the server that did, whose id keeps the horizon of
every snapshot here, VACUUM FULL's own included; one that is still
open after that is named in the result's ``refused`` (its pid, state and start), and
``verify_erasure`` will find what it pins until it ends and compaction runs again. A table another
session holds a lock on is skipped after the same time (``lock_timeout``) and named too, rather
than holding the erasure command forever.
"""
from __future__ import annotations

import logging
import time

from django.db import DatabaseError, OperationalError, connection

logger = logging.getLogger("legalmem.records")

#: How long compaction waits for older transactions of other sessions to end.
SNAPSHOT_WAIT_SECONDS = 30.0
_SNAPSHOT_POLL_SECONDS = 0.2
#: Other sessions whose transaction began before ``%s`` and keeps the erased row versions: in
#: this database, any snapshot or transaction id; in another database of the same server, a
#: transaction id (xids are server-wide: while it runs, every snapshot taken here — VACUUM FULL's
#: own included — counts it as running, and rows deleted after it began are kept). A session of
#: another role is seen only with ``pg_read_all_stats`` (docs/records.md, "Physical removal").
_OLDER_SESSIONS_SQL = (
    "SELECT pid, state, xact_start FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
    "AND xact_start < %s AND (backend_xid IS NOT NULL "
    "OR (datname = current_database() AND backend_xmin IS NOT NULL)) ORDER BY xact_start"
)


def sessions_pinning_old_rows(since) -> list[tuple[int, str, object]]:
    """(pid, state, transaction start) of the other sessions whose transaction began before
    ``since`` and still holds a snapshot: VACUUM must keep the row versions they may see."""
    with connection.cursor() as cursor:
        cursor.execute(_OLDER_SESSIONS_SQL, [since])
        return list(cursor.fetchall())


def wait_for_older_snapshots(since, timeout: float | None = None) -> list[tuple[int, str, object]]:
    """Wait until no other session pins rows older than ``since``; what still does after ``timeout``
    (default: ``SNAPSHOT_WAIT_SECONDS`` as it is when called, not when this module was loaded)."""
    deadline = time.monotonic() + (SNAPSHOT_WAIT_SECONDS if timeout is None else timeout)
    while True:
        pinning = sessions_pinning_old_rows(since)
        if not pinning or time.monotonic() >= deadline:
            return pinning
        time.sleep(_SNAPSHOT_POLL_SECONDS)


#: Tables an erasure deletes from or rewrites rows of (prefixes of the apps' tables).
TOUCHED_PREFIXES = ("memory_", "navigation_", "django_admin_log", "django_tasks_db")


def touched_tables() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename")
        return [name for (name,) in cursor.fetchall() if name.startswith(TOUCHED_PREFIXES)]


def compact_after_erasure() -> dict[str, object]:
    """Rewrite the touched tables and retire the WAL; returns what was done (and what the
    server refused, e.g. CHECKPOINT without the privilege on a server given by DATABASE_URL)."""
    started = time.monotonic()
    done: dict[str, object] = {"tables": 0, "refused": []}
    if connection.in_atomic_block:  # VACUUM cannot run in a transaction (a caller's, or a test's)
        done["refused"].append("compaction skipped: called inside a transaction")
        logger.warning("erasure compaction: %s", done)
        return done
    with connection.cursor() as cursor:
        cursor.execute("SELECT now()")  # outside a transaction: after the erasure committed
        (committed_by,) = cursor.fetchone()
    pinning = wait_for_older_snapshots(committed_by)
    if pinning:
        done["refused"].append(
            "older transactions still open, their row versions kept: "
            + ", ".join(f"pid {pid} ({state}, since {started:%H:%M:%S})" for pid, state, started in pinning)
        )
    with connection.cursor() as cursor:
        # VACUUM FULL waits for every lock on its table: a session idle in a transaction that read
        # it would hold the erasure forever. Wait as long as for snapshots, then name the table.
        cursor.execute("SELECT set_config('lock_timeout', %s, false)", [f"{int(SNAPSHOT_WAIT_SECONDS * 1000)}ms"])
        try:
            for table in touched_tables():
                try:
                    cursor.execute(f'VACUUM (FULL, ANALYZE) "{table}"')
                except OperationalError as error:  # lock_timeout: another session holds the table
                    done["refused"].append(f"{table}: {str(error).strip().splitlines()[0]}")
                    continue
                done["tables"] += 1
        finally:
            cursor.execute("RESET lock_timeout")
        for statement in ("VACUUM FULL pg_catalog.pg_statistic", "SELECT pg_switch_wal()", "CHECKPOINT",
                          "SELECT pg_switch_wal()", "CHECKPOINT"):
            try:
                cursor.execute(statement)
            except DatabaseError as error:  # not the owner / not superuser: say so, go on
                done["refused"].append(f"{statement}: {str(error).strip().splitlines()[0]}")
    done["seconds"] = round(time.monotonic() - started, 1)
    logger.info("erasure compaction: %s", done)
    return done
