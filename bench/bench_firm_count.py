"""What the number of firms costs a search (docs/performance.md, "Why the firm-wide layers share
one index"): empty firms are added to a kept benchmark database (bench/bench_search.py builds
it; ``BENCH_KEEP_DB=1``), then the search's note statement is planned and the search timed, and
the firms are deleted again.

    LEGALMEM_DATA_DIR=<folder of that database> .venv/bin/python -m legalmem_site.launcher manage \\
        shell -c "from bench.bench_firm_count import main; main()"

With ``BENCH_FIRM_INDEXES=1`` each added firm also gets a partial HNSW index over its firm-wide
notes, as migration 0027 built them (undone by 0028): how that design grew with the firms.
Knobs: BENCH_DB_NAME (legalmem_bench_search), BENCH_FIRM_COUNTS ("0,50,300": firms added per
step), BENCH_QUERIES (50: searches timed per step, a current matter each).
"""
from __future__ import annotations

import os
import re
import time

from django.db import connection

from bench.bench_search import QUERIES, _percentile, open_kept_world

STATEMENTS = 20  # note statements captured, each planned once per step


def _note_statements(world) -> list[tuple[str, list]]:
    """The note statements of ``STATEMENTS`` searches (without their settings statement)."""
    from recall import candidate_sql, search_memory

    captured: list[tuple[str, list]] = []
    fetch = candidate_sql._fetch_with_local_hnsw

    def capture(sql: str, params: list, ef_search: int, max_scan_tuples: int) -> list[tuple]:
        captured.append((sql, params))
        return fetch(sql, params, ef_search, max_scan_tuples)

    candidate_sql._fetch_with_local_hnsw = capture
    try:
        for i in range(STATEMENTS):
            search_memory(world.user, QUERIES[i % len(QUERIES)], k=10, strategy="layered",
                          matter_id=world.assigned[i % len(world.assigned)].pk)
    finally:
        candidate_sql._fetch_with_local_hnsw = fetch
    return captured


def _planning_ms(statements: list[tuple[str, list]]) -> list[float]:
    found = []
    with connection.cursor() as cursor:
        for sql, params in statements:
            cursor.execute("EXPLAIN (SUMMARY) " + sql, params)
            plan = "\n".join(row[0] for row in cursor.fetchall())
            found.append(float(re.search(r"Planning Time: ([\d.]+)", plan).group(1)))
    return found


def _search_ms(world, queries: int) -> list[float]:
    from recall import search_memory

    times = []
    for i in range(queries + 10):
        started = time.perf_counter()
        search_memory(world.user, QUERIES[i % len(QUERIES)], k=10, strategy="layered",
                      matter_id=world.assigned[0].pk)
        if i >= 10:
            times.append((time.perf_counter() - started) * 1000)
    return times


def _add_firms(count: int, with_indexes: bool) -> list[int]:
    from memory.models import Firm

    firms = Firm.objects.bulk_create(Firm(name=f"bench firm {i}", slug=f"bench-firm-count-{i}") for i in range(count))
    if with_indexes:
        with connection.cursor() as cursor:
            for firm in firms:
                cursor.execute(
                    f"CREATE INDEX note_firmwide_hnsw_f{int(firm.pk)} ON memory_note USING hnsw "
                    f"(embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64) WHERE firm_id = {int(firm.pk)} "
                    "AND memory_scope IN ('cross_case', 'general_law', 'global') AND status = 'active'"
                )
    return [firm.pk for firm in firms]


def _remove_firms(firm_ids: list[int]) -> None:
    from memory.models import Firm

    with connection.cursor() as cursor:
        for firm_id in firm_ids:
            cursor.execute(f"DROP INDEX IF EXISTS note_firmwide_hnsw_f{int(firm_id)}")
    Firm.objects.filter(pk__in=firm_ids).delete()


def _note_indexes() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_indexes WHERE tablename = 'memory_note' AND schemaname = current_schema()")
        return cursor.fetchone()[0]


def main() -> list[dict]:
    world = open_kept_world()
    counts = [int(n) for n in os.environ.get("BENCH_FIRM_COUNTS", "0,50,300").split(",")]
    with_indexes = os.environ.get("BENCH_FIRM_INDEXES") == "1"
    queries = int(os.environ.get("BENCH_QUERIES", "50"))
    statements = _note_statements(world)
    results = []
    print("| firms added | indexes on memory_note | note statement planning p50 / p95 ms | search p50 / p95 ms |")
    print("|---|---|---|---|")
    for count in counts:
        added = _add_firms(count, with_indexes)
        try:
            planning = _planning_ms(statements)
            searches = _search_ms(world, queries)
            row = {"firms_added": count, "note_indexes": _note_indexes(),
                   "planning_p50_ms": _percentile(planning, 0.5), "planning_p95_ms": _percentile(planning, 0.95),
                   "search_p50_ms": _percentile(searches, 0.5), "search_p95_ms": _percentile(searches, 0.95)}
        finally:
            _remove_firms(added)
        results.append(row)
        print(f"| {count} | {row['note_indexes']} | {row['planning_p50_ms']:.2f} / {row['planning_p95_ms']:.2f} | "
              f"{row['search_p50_ms']:.1f} / {row['search_p95_ms']:.1f} |", flush=True)
    return results
