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

Runs outside any transaction (VACUUM cannot run in one), after the erasure committed.
"""
from __future__ import annotations

import logging
import time

from django.db import DatabaseError, connection

logger = logging.getLogger("legalmem.records")

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
        for table in touched_tables():
            cursor.execute(f'VACUUM (FULL, ANALYZE) "{table}"')
            done["tables"] += 1
        for statement in ("VACUUM FULL pg_catalog.pg_statistic", "SELECT pg_switch_wal()", "CHECKPOINT",
                          "SELECT pg_switch_wal()", "CHECKPOINT"):
            try:
                cursor.execute(statement)
            except DatabaseError as error:  # not the owner / not superuser: say so, go on
                done["refused"].append(f"{statement}: {str(error).strip().splitlines()[0]}")
    done["seconds"] = round(time.monotonic() - started, 1)
    logger.info("erasure compaction: %s", done)
    return done
