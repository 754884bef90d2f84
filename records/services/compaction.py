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
into the new file. Which rows those are is decided by transaction id, not by time: a row deleted
by transaction E is kept while any session of this database has an xmin (the oldest transaction
its snapshot counts as running) or an id not after E, and while any writing transaction of the
server older than E runs (its id keeps the horizon of every snapshot here, VACUUM FULL's own
included). A session that began after the erasure committed can still hold such an xmin, if it
took its snapshot while an older transaction ran. So compaction first reads the next transaction
id (after E, since the erasure committed) and waits (at most
``settings.ERASURE_SNAPSHOT_WAIT_SECONDS``) until no other session holds an xmin or id before it;
one that still does is named in the result's ``refused`` (its pid, state and start), and
``verify_erasure`` will find what it pins until it ends and compaction runs again. A table another
session holds a lock on is skipped after the same time (``lock_timeout``) and named too, rather
than holding the erasure command forever.
"""
from __future__ import annotations

import logging
import time

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection

logger = logging.getLogger("legalmem.records")

_SNAPSHOT_POLL_SECONDS = 0.2
#: Other sessions that keep row versions deleted before transaction id ``horizon`` (the next id when
#: compaction began, so after the erasure's): in this database, a snapshot whose xmin or an id
#: that precedes it; in another database of the same server, an id that precedes it (xids are
#: server-wide: while it runs, every snapshot taken here — VACUUM FULL's own included — counts it
#: as running). ``age`` compares xids across wraparound: the older, the greater. A session of
#: another role is seen only with ``pg_read_all_stats`` (docs/records.md, "Physical removal").
_OLDER_SESSIONS_SQL = (
    "SELECT pid, state, xact_start FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
    "AND (age(backend_xid) > age(%(horizon)s::xid) "
    "OR (datname = current_database() AND age(backend_xmin) > age(%(horizon)s::xid))) ORDER BY xact_start"
)
#: A transaction id of its own, taken outside any transaction (so committed at once): every
#: transaction that began before it (the erasure's included) has a smaller one. A snapshot's
#: xmax would not do: it is one past the last *completed* id, and a running one may be above it.
_NEXT_XID_SQL = "SELECT xid(pg_current_xact_id())::text"


def next_transaction_id() -> str:
    """A transaction id newer than every one begun so far: the horizon compaction waits for."""
    with connection.cursor() as cursor:
        cursor.execute(_NEXT_XID_SQL)
        return cursor.fetchone()[0]


def sessions_pinning_old_rows(horizon: str) -> list[tuple[int, str, object]]:
    """(pid, state, transaction start) of the other sessions that keep row versions deleted
    before transaction id ``horizon``: VACUUM must keep the row versions they may see."""
    with connection.cursor() as cursor:
        cursor.execute(_OLDER_SESSIONS_SQL, {"horizon": horizon})
        return list(cursor.fetchall())


def wait_for_older_snapshots(horizon: str, timeout: float | None = None) -> list[tuple[int, str, object]]:
    """Wait until no other session keeps rows deleted before ``horizon``; what still does after
    ``timeout`` (default: ``settings.ERASURE_SNAPSHOT_WAIT_SECONDS`` as it is when called, not when
    this module was loaded)."""
    deadline = time.monotonic() + (settings.ERASURE_SNAPSHOT_WAIT_SECONDS if timeout is None else timeout)
    while True:
        pinning = sessions_pinning_old_rows(horizon)
        if not pinning or time.monotonic() >= deadline:
            return pinning
        time.sleep(_SNAPSHOT_POLL_SECONDS)


#: Tables an erasure deletes from or rewrites rows of (prefixes of the apps' tables).
TOUCHED_PREFIXES = ("memory_", "documents_", "navigation_", "django_admin_log", "django_tasks_database_")


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
    pinning = wait_for_older_snapshots(next_transaction_id())  # outside a transaction: after the erasure
    if pinning:
        done["refused"].append(
            "older transactions still open, their row versions kept: "
            + ", ".join(f"pid {pid} ({state}, since {started:%H:%M:%S})" for pid, state, started in pinning)
        )
    with connection.cursor() as cursor:
        # VACUUM FULL waits for every lock on its table: a session idle in a transaction that read
        # it would hold the erasure forever. Wait as long as for snapshots, then name the table.
        wait_ms = int(settings.ERASURE_SNAPSHOT_WAIT_SECONDS * 1000)
        cursor.execute("SELECT set_config('lock_timeout', %s, false)", [f"{wait_ms}ms"])
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
        done["statistics_cleared"] = clear_statistics_of_empty_tables(cursor, done["refused"])
        for statement in ("VACUUM FULL pg_catalog.pg_statistic", "SELECT pg_switch_wal()", "CHECKPOINT",
                          "SELECT pg_switch_wal()", "CHECKPOINT"):
            try:
                cursor.execute(statement)
            except DatabaseError as error:  # not the owner / not superuser: say so, go on
                done["refused"].append(f"{statement}: {str(error).strip().splitlines()[0]}")
    done["refused"] += stale_statistics() + wal_kept_back()
    done["seconds"] = round(time.monotonic() - started, 1)
    logger.info("erasure compaction: %s", done)
    return done


#: Column statistics (table, column, inherited) of the tables named, their indexes' included.
_STATISTICS_SQL = (
    "SELECT c.relname, a.attname, s.stainherit FROM pg_statistic s JOIN pg_class c ON c.oid = s.starelid "
    "JOIN pg_attribute a ON a.attrelid = s.starelid AND a.attnum = s.staattnum "
    "LEFT JOIN pg_index i ON i.indexrelid = c.oid JOIN pg_class t ON t.oid = coalesce(i.indrelid, c.oid) "
    "JOIN pg_namespace n ON n.oid = t.relnamespace WHERE n.nspname = 'public' AND t.relname = ANY(%s) "
    "ORDER BY 1, 2"
)


def empty_tables(cursor) -> list[str]:
    """The touched tables without a row (after the erasure, a matter's documents may be the last)."""
    found = []
    for table in touched_tables():
        cursor.execute(f'SELECT NOT EXISTS (SELECT 1 FROM "{table}")')
        if cursor.fetchone()[0]:
            found.append(table)
    return found


def statistics_of(cursor, tables: list[str]) -> list[tuple[str, str, bool]]:
    if not tables:
        return []
    cursor.execute(_STATISTICS_SQL, [tables])
    return cursor.fetchall()


def clear_statistics_of_empty_tables(cursor, refused: list[str]) -> int:
    """Clear the column statistics of each touched table left without rows (and of its
    expression indexes): ANALYZE replaces a table's statistics only from a sample that has rows,
    so an emptied table keeps the most common values and histogram of its last ANALYZE,
    readable by anyone who may read ``pg_stats``. PostgreSQL 18's ``pg_clear_attribute_stats``
    needs only the table's MAINTAIN right; before 18 only a superuser may delete rows of
    ``pg_statistic``, and a refusal is reported. Returns how many column statistics went."""
    cleared = 0
    for relation, column, inherited in statistics_of(cursor, empty_tables(cursor)):
        try:
            if connection.pg_version >= 180000:
                cursor.execute("SELECT pg_clear_attribute_stats('public', %s, %s, %s)", [relation, column, inherited])
            else:
                cursor.execute(
                    "DELETE FROM pg_catalog.pg_statistic s USING pg_attribute a WHERE s.starelid = %s::regclass "
                    "AND a.attrelid = s.starelid AND a.attnum = s.staattnum AND a.attname = %s "
                    "AND s.stainherit = %s", [f'public."{relation}"', column, inherited])
        except DatabaseError as error:
            refused.append(f"statistics of {relation}.{column}: {str(error).strip().splitlines()[0]}")
            continue
        cleared += 1
    return cleared


def stale_statistics() -> list[str]:
    """The check after the rebuild: column statistics still kept by a touched table without rows."""
    with connection.cursor() as cursor:
        stale = statistics_of(cursor, empty_tables(cursor))
    return [f"statistics of {relation}.{column} kept though its table is empty" for relation, column, _ in stale]


def wal_kept_back() -> list[str]:
    """Server settings that keep WAL segments after a checkpoint (so the erased rows in them
    stay on disk): a WAL archive, ``wal_keep_size``, replication slots. The embedded server has
    none; on a server of your own they are its administrator's (docs/records.md)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('archive_mode'), (SELECT setting::bigint FROM pg_settings "
            "WHERE name = 'wal_keep_size'), (SELECT count(*) FROM pg_replication_slots)"
        )
        archive_mode, keep_megabytes, slots = cursor.fetchone()
    kept = []
    if archive_mode != "off":
        kept.append(f"WAL: archive_mode = {archive_mode}: the archive keeps the segments holding the erased rows")
    if keep_megabytes:
        kept.append(f"WAL: wal_keep_size keeps {keep_megabytes} MB of segments after each checkpoint")
    if slots:
        kept.append(f"WAL: {slots} replication slot(s) may keep segments until their consumers read them")
    return kept
