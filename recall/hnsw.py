"""The HNSW session settings of the vector reads and the walks' candidate-list sizes.

HNSW under filters: pgvector applies WHERE clauses *after* the index scan, so a filtered
query could return far fewer than LIMIT rows. We run the vector reads inside one
transaction with ``SET LOCAL`` (via ``set_config(..., true)``):
``hnsw.ef_search`` (candidate list size), ``hnsw.iterative_scan = relaxed_order`` (keep
scanning the graph until LIMIT rows pass the filter, pgvector ≥ 0.8) and
``hnsw.max_scan_tuples`` (the bound on that scan). The querysets are evaluated inside
the same transaction (pgvector #675); relaxed order means rows may come slightly out of
order, so callers re-sort by the distance we annotate.
"""
from __future__ import annotations

from typing import Sequence

from django.db import connection

from recall.instances import fast_timestamps

DEFAULT_EF_SEARCH = 200
# The candidate list of the raw messages' HNSW walk (``strategies.layered``; a user's messages are
# walked only above settings.EXACT_MESSAGE_MAX_ROWS). On real text embeddings, 40k messages of one user
# (bench/bench_walk_recall.py, BENCH_WALK_OWNERS=1 BENCH_WALK_LAYERS=1 BENCH_WALK_LIMIT=20),
# recall@10 against exact is 0.932 at 100, 0.961 at 200 and 0.977 at 400; at 100k messages the
# read costs +1.4 / +1.2 ms p50 / p95 at 200 and +4.7 / +5.4 ms at 400, against 100.
WALK_EF_SEARCH = 200
# The candidate list of the note statement's walks (the firm-wide layers share one, in the index
# all firms share). On real text embeddings (bench/bench_walk_recall.py, 40k rows) recall@10 per
# firm-wide layer against exact is 0.949–0.965 at 200 for a firm holding half of the index and
# 0.958–0.968 for one holding a tenth (docs/performance.md, "Why the firm-wide layers share one index").
NOTE_WALK_EF_SEARCH = 200
DEFAULT_MAX_SCAN_TUPLES = 20_000


def _set_local_hnsw(ef_search: int, max_scan_tuples: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), "
            "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
            "set_config('hnsw.max_scan_tuples', %s, true)",
            [str(int(ef_search)), str(int(max_scan_tuples))],
        )


_LOCAL_HNSW = (
    "SELECT set_config('hnsw.ef_search', %s, true), "
    "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
    "set_config('hnsw.max_scan_tuples', %s, true)"
)


def _fetch_with_local_hnsw(sql: str, params: list, ef_search: int, max_scan_tuples: int) -> list[tuple]:
    """The rows of ``sql`` under the HNSW settings of ``_set_local_hnsw``, in ONE round trip: both
    statements go in one query string (client-side binding: the simple query protocol), which
    PostgreSQL runs as one implicit transaction — the settings hold for the read and end with it.
    ``transaction.atomic`` with its own SET cost BEGIN, SET and COMMIT on top. Inside a caller's
    transaction they last until its end, as ``SET LOCAL`` there always did."""
    with connection.cursor() as cursor:
        fast_timestamps(cursor)
        cursor.execute(f"{_LOCAL_HNSW}; {sql}", [str(int(ef_search)), str(int(max_scan_tuples)), *params])
        cursor.nextset()
        return cursor.fetchall()


def read_of_statement(sql: str, params: Sequence) -> tuple[str, list]:
    """The read of a ``_fetch_with_local_hnsw`` query string without its settings statement (what
    an EXPLAIN of the read takes: the tests, the bench's access report)."""
    prefix = _LOCAL_HNSW + "; "
    if sql.startswith(prefix):
        return sql[len(prefix):], list(params)[2:]
    return sql, list(params)
