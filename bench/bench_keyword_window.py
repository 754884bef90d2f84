"""The latest-messages window of the every-word keyword read (docs/performance.md, "Third
round"): the same layered searches with the window on and off, interleaved with the bare cost,
on a kept benchmark database (bench/bench_search.py builds it; ``BENCH_KEEP_DB=1``).

    LEGALMEM_DATA_DIR=<folder of that database> .venv/bin/python -m legalmem_site.launcher manage \\
        shell -c "from bench.bench_keyword_window import main; main()"

Knobs: BENCH_DB_NAME (legalmem_bench_search), BENCH_QUERIES (200). Prints p50 / p95 of the
search, of its message reads before the vector, and of the bare cost, with the load average.
"""
from __future__ import annotations

import os
import random
import statistics
import time

from django.db import connection

from bench.bench_search import QUERIES, _bare, _kept_world, _percentile


def main() -> None:
    from memory.retrieval import message_scale, search_memory

    connection.close()
    connection.settings_dict["NAME"] = os.environ.get("BENCH_DB_NAME", "legalmem_bench_search")
    world = _kept_world("bench-target")
    if world is None:
        raise SystemExit("no kept benchmark database: run bench_search with BENCH_KEEP_DB=1 first")
    queries = int(os.environ.get("BENCH_QUERIES", "200"))
    slack = message_scale.WINDOW_SLACK
    rng = random.Random(7)
    totals: dict[str, list[float]] = {"window": [], "no window": [], "bare": []}
    before: dict[str, list[float]] = {"window": [], "no window": []}
    for i in range(queries + 10):
        query = QUERIES[i % len(QUERIES)]
        matter = rng.choice(world.assigned).pk if rng.random() < 0.8 else None
        bare_ms = _bare(world, query)
        for mode in (("window", "no window") if i % 2 else ("no window", "window")):
            # A slack this large makes every window "all messages": the read without it.
            message_scale.WINDOW_SLACK = slack if mode == "window" else 10**9
            started = time.perf_counter()
            result = search_memory(world.user, query, k=10, strategy="layered", matter_id=matter)
            if i >= 10:  # warm-up excluded
                totals[mode].append((time.perf_counter() - started) * 1000)
                before[mode].append(result.timings["messages_before_vector"])
        if i >= 10:
            totals["bare"].append(bare_ms)
    message_scale.WINDOW_SLACK = slack
    for mode, values in totals.items():
        print(f"{mode:>10}: search p50 / p95 {statistics.median(values):.1f} / {_percentile(values, 0.95):.1f} ms")
    for mode, values in before.items():
        print(f"{mode:>10}: messages before the vector p50 / p95 "
              f"{statistics.median(values):.1f} / {_percentile(values, 0.95):.1f} ms")
    bare_p95 = _percentile(totals["bare"], 0.95)
    print(f"ratio p95: window {_percentile(totals['window'], 0.95) / bare_p95:.2f}, "
          f"no window {_percentile(totals['no window'], 0.95) / bare_p95:.2f}; load {os.getloadavg()[0]:.2f}")
