"""Search at a moment against today's search (issue 54: "an as-of search p95 against a current
search, at 10k and 100k notes, target ≤ 1.3×"): the same questions, interleaved in a shuffled
order, through ``search_memory`` as it is (``layered``), ``as_of`` (system time) and ``valid_at``
(world time) halfway through a year of notes, a tenth of them superseded. Query encoding counts in
every side (no remembered vectors).

    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell -c "from bench.bench_as_of import main; main()"

Knobs: BENCH_SIZES (default "10000": notes of the searched firm, e.g. "10000,100000"; the UPDATE
that spreads the notes in time rewrites every row and its HNSW entry once), BENCH_QUERIES (default
100), BENCH_DB_NAME (default legalmem_bench_as_of: a throw-away database, dropped at the end).
Data: bench_search's synthetic notes and clustered vectors (50 matters, the user on 10).
"""
from __future__ import annotations

import os
import random
import statistics
import time
from datetime import timedelta

import numpy as np
from django.conf import settings
from django.db import connection
from django.utils import timezone

from bench.bench_search import QUERIES, _centres, _insert, _make_world, _percentile
from bench.databases import throwaway_database

SPREAD_DAYS = 365


def _spread_in_time(firm_id: int) -> None:
    """Notes said and stored over a year; every tenth superseded a month after it was said. One
    UPDATE, so each row (and its HNSW entry) is rewritten once."""
    start = timezone.now() - timedelta(days=SPREAD_DAYS)
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_note SET said_at = x.t, stored_at = x.t, valid_from = x.t, "
            "status = CASE WHEN x.replaced THEN 'superseded' ELSE memory_note.status END, "
            "valid_to = CASE WHEN x.replaced THEN x.t + interval '30 days' END, "
            "retired_at = CASE WHEN x.replaced THEN x.t + interval '30 days' END "
            "FROM (SELECT id, %s + (random() * interval '365 days') AS t, random() < 0.1 AS replaced "
            "      FROM memory_note WHERE firm_id = %s) AS x "
            "WHERE memory_note.id = x.id", [start, firm_id])
        cursor.execute("ANALYZE memory_note")


def _timed(world, queries: int) -> dict[str, list[float]]:
    from recall import search_memory

    halfway = timezone.now() - timedelta(days=SPREAD_DAYS // 2)
    sides = {"layered": {}, "as_of": {"as_of": halfway}, "valid_at": {"valid_at": halfway}}
    times: dict[str, list[float]] = {side: [] for side in sides}
    rng = random.Random(7)
    for i in range(queries + 10):
        query = QUERIES[i % len(QUERIES)]
        matter = rng.choice(world.assigned).pk if rng.random() < 0.8 else None
        order = list(sides)
        random.Random(i).shuffle(order)
        for side in order:
            started = time.perf_counter()
            search_memory(world.user, query, k=10, matter_id=matter, **sides[side])
            if i >= 10:
                times[side].append((time.perf_counter() - started) * 1000)
    return times


def main() -> None:
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "10000").split(",")]
    queries = int(os.environ.get("BENCH_QUERIES", "100"))
    settings.SEARCH_QUERY_CACHE_SIZE = 0
    with throwaway_database(os.environ.get("BENCH_DB_NAME", "legalmem_bench_as_of")):
        world = _make_world("bench-as-of", matters=50, assigned=10, users=3)
        rng = np.random.default_rng(7)
        centres = _centres(rng)
        inserted = 0
        for size in sizes:
            _insert(world, size - inserted, rng, centres)
            inserted = size
            _spread_in_time(world.firm.pk)
            times = _timed(world, queries)
            p95 = {side: _percentile(values, 0.95) for side, values in times.items()}
            print(f"{size} notes, {queries} questions (median / p95 ms):")
            for side, values in times.items():
                print(f"  {side:9} {statistics.median(values):7.1f} / {p95[side]:7.1f}"
                      f"   ({p95[side] / p95['layered']:.2f}x the layered p95)")
