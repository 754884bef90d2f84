"""The keyword best of very many messages, read three ways (docs/performance.md, "Third
round" and "Fourth round"): by score levels (the default), by the every-word read in the
latest-messages window then MaxScore (round three), and without the window (round two) — the
same layered searches, interleaved with the bare cost, on a kept benchmark database
(bench/bench_search.py builds it; ``BENCH_KEEP_DB=1``).

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

from bench.bench_search import QUERIES, _bare, _percentile, open_kept_world


def main() -> None:
    from recall import message_scale, search_memory

    world = open_kept_world()
    queries = int(os.environ.get("BENCH_QUERIES", "200"))
    slack, words = message_scale.WINDOW_SLACK, message_scale.LEVEL_MAX_WORDS
    # mode: (LEVEL_MAX_WORDS, WINDOW_SLACK) — no score levels with 0 words; a slack this large
    # makes every window "all messages": the read without it.
    modes = {"levels": (words, slack), "window": (0, slack), "no window": (0, 10**9)}
    rng = random.Random(7)
    totals: dict[str, list[float]] = {mode: [] for mode in modes} | {"bare": []}
    before: dict[str, list[float]] = {mode: [] for mode in modes}
    names = list(modes)
    for i in range(queries + 10):
        query = QUERIES[i % len(QUERIES)]
        matter = rng.choice(world.assigned).pk if rng.random() < 0.8 else None
        bare_ms = _bare(world, query)
        for mode in names[i % len(names):] + names[:i % len(names)]:  # each mode first in turn
            message_scale.LEVEL_MAX_WORDS, message_scale.WINDOW_SLACK = modes[mode]
            started = time.perf_counter()
            result = search_memory(world.user, query, k=10, strategy="layered", matter_id=matter)
            if i >= 10:  # warm-up excluded
                totals[mode].append((time.perf_counter() - started) * 1000)
                before[mode].append(result.timings["messages_before_vector"])
        if i >= 10:
            totals["bare"].append(bare_ms)
    message_scale.LEVEL_MAX_WORDS, message_scale.WINDOW_SLACK = words, slack
    for mode, values in totals.items():
        print(f"{mode:>10}: search p50 / p95 {statistics.median(values):.1f} / {_percentile(values, 0.95):.1f} ms")
    for mode, values in before.items():
        print(f"{mode:>10}: messages before the vector p50 / p95 "
              f"{statistics.median(values):.1f} / {_percentile(values, 0.95):.1f} ms")
    bare_p95 = _percentile(totals["bare"], 0.95)
    print("ratio p95: " + ", ".join(f"{mode} {_percentile(totals[mode], 0.95) / bare_p95:.2f}" for mode in modes)
          + f"; load {os.getloadavg()[0]:.2f}")
