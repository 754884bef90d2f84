"""The note read around the query vector (docs/performance.md, "Fourth round"): the same layered
searches with each change of that round on and off, in one process and interleaved per query
(so every variant sees the same load), on a kept benchmark database (bench/bench_search.py
builds it; ``BENCH_KEEP_DB=1``).

    LEGALMEM_DATA_DIR=<folder of that database> .venv/bin/python -m legalmem_site.launcher manage \\
        shell -c "from bench.bench_note_read import main; main()"

Variants (``BENCH_VARIANTS``, comma-separated, default all): ``now`` (the code as it is),
``notes ef 100`` (the note statement's HNSW walk at its former ``hnsw.ef_search``), ``one statement`` (the case
layer without a current matter inside the note statement again), ``settings apart`` (BEGIN,
``set_config``, the note read, COMMIT: four round trips). Knobs: BENCH_DB_NAME (legalmem_bench_search),
BENCH_QUERIES (100), SEARCH_PARALLEL_READS (the deployment's). Prints p50 / p95 of the search,
of what it did after the vector (message statement + note wait), split by with / without a
current matter, and of the note and message statements.
"""
from __future__ import annotations

import os
from collections import defaultdict

from django.db import connection, transaction

from bench.bench_search import _percentile, interleaved_searches, open_kept_world

VARIANTS = ("now", "notes ef 100", "one statement", "settings apart")


def _settings_apart(sql: str, params: list, ef_search: int, max_scan_tuples: int) -> list[tuple]:
    """The former form of ``hnsw._fetch_with_local_hnsw``: a transaction with its own SET."""
    from recall import hnsw

    with transaction.atomic():
        hnsw._set_local_hnsw(ef_search, max_scan_tuples)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            return cursor.fetchall()


def main() -> None:
    from recall import candidate_sql, strategies

    world = open_kept_world()
    queries = int(os.environ.get("BENCH_QUERIES", "100"))
    variants = [v.strip() for v in os.environ.get("BENCH_VARIANTS", ",".join(VARIANTS)).split(",")]
    # read_prepared_notes looks up NOTE_WALK_EF_SEARCH and _fetch_with_local_hnsw in candidate_sql
    # at run time: they are replaced there.
    ef, apart = candidate_sql.NOTE_WALK_EF_SEARCH, strategies._case_read_apart
    fetch = candidate_sql._fetch_with_local_hnsw

    def use(variant: str) -> None:
        candidate_sql.NOTE_WALK_EF_SEARCH = 100 if variant == "notes ef 100" else ef
        strategies._case_read_apart = (lambda *args: False) if variant == "one statement" else apart
        candidate_sql._fetch_with_local_hnsw = _settings_apart if variant == "settings apart" else fetch

    figures: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    try:
        for _i, matter, variant, result, elapsed, _bare in interleaved_searches(world, variants, use, queries):
            kind = "without a matter" if matter is None else "with a matter"
            after = result.timings.get("messages", 0.0) + result.timings.get("notes_wait", 0.0)
            for name, value in (("search", elapsed), (f"search, {kind}", elapsed), ("after the vector", after),
                                (f"after the vector, {kind}", after),
                                ("note statement", result.timings.get("vector", 0.0)),
                                ("message statement", result.timings.get("messages", 0.0))):
                figures[name][variant].append(value)
    finally:
        use("now")
    print(f"p50 / p95 ms, {queries} queries, load {os.getloadavg()[0]:.2f}")
    print(f"{'':34}" + "".join(f"{variant:>20}" for variant in variants))
    for name, by_variant in figures.items():
        cells = "".join(f"{_percentile(by_variant[v], 0.5):>10.1f} / {_percentile(by_variant[v], 0.95):<7.1f}"
                        for v in variants)
        print(f"{name:34}{cells}")
