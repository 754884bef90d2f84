"""The exact layers' vectors kept in process (docs/performance.md, "Fifth round"): the same layered
searches with and without them, in one process and interleaved per query beside the bare cost
(one encode + one pgvector top-k), on a kept benchmark database (bench/bench_search.py builds it;
``BENCH_KEEP_DB=1``).

    BENCH_DB_NAME=<kept database> LEGALMEM_DATA_DIR=<its folder> .venv/bin/python -m legalmem_site.launcher \\
        manage shell -c "from bench.bench_exact_vectors import main; main()"

Variants (``BENCH_VARIANTS``, comma-separated, default all): ``now`` (the code as it is),
``in PostgreSQL`` (``SEARCH_EXACT_VECTORS_MB=0``: every note of the exact layers compared by the
database, the case layer without a current matter on a connection of its own, as in round four).
Knobs: BENCH_DB_NAME (legalmem_bench_search), BENCH_QUERIES (100). Prints p50 / p95 of the search
(with / without a current matter) and its p95 over the bare p95, the groups loaded and the
megabytes kept.
"""
from __future__ import annotations

import os
from collections import defaultdict

from django.conf import settings

from bench.bench_search import _percentile, interleaved_searches, open_kept_world

VARIANTS = ("now", "in PostgreSQL")


def main() -> None:
    from recall.exact_vectors import kept_vectors

    world = open_kept_world()
    queries = int(os.environ.get("BENCH_QUERIES", "100"))
    variants = [v.strip() for v in os.environ.get("BENCH_VARIANTS", ",".join(VARIANTS)).split(",")]
    kept_mb = settings.SEARCH_EXACT_VECTORS_MB

    def use(variant: str) -> None:
        settings.SEARCH_EXACT_VECTORS_MB = 0 if variant == "in PostgreSQL" else kept_mb

    figures: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    bare: dict[int, float] = {}
    try:
        for i, matter, variant, _result, elapsed, cost in interleaved_searches(world, variants, use, queries, bare=True):
            kind = "without a matter" if matter is None else "with a matter"
            figures["search"][variant].append(elapsed)
            figures[f"search, {kind}"][variant].append(elapsed)
            bare[i] = cost
    finally:
        use("now")
    bare = list(bare.values())
    bare_p95 = _percentile(bare, 0.95)
    print(f"p50 / p95 ms, {queries} queries, load {os.getloadavg()[0]:.2f}; bare p50 / p95 "
          f"{_percentile(bare, 0.5):.1f} / {bare_p95:.1f}; kept {kept_vectors.nbytes / 1e6:.1f} MB, "
          f"{kept_vectors.loads} group loads")
    print(f"{'':28}" + "".join(f"{variant:>22}" for variant in variants))
    for name, by_variant in figures.items():
        cells = "".join(f"{_percentile(by_variant[v], 0.5):>12.1f} / {_percentile(by_variant[v], 0.95):<7.1f}"
                        for v in variants)
        print(f"{name:28}{cells}")
    print(f"{'ratio p95 (search / bare)':28}" + "".join(
        f"{_percentile(figures['search'][v], 0.95) / bare_p95:>21.2f}x" for v in variants))
