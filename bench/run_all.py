"""``make bench``: run the ratio benchmarks in one process and write bench/RESULTS.md.

Each figure that is judged is a **ratio measured in one run** (the machine's load changes
absolute times by 2x between runs): import wall time / its encoding floor, layered search
p95 / the bare vector search p95, query encoding p95 of a long question / of a 30-character
one. The load average is written next to them, and the command that produced them.

Knobs are those of each benchmark (bench/README.md); BENCH_ONLY=import,search,... runs a subset.
"""
from __future__ import annotations

import datetime as dt
import json
import os
import platform
import subprocess
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "RESULTS.md"
COMMAND = "make bench"


def _section(title: str, started: float, body: list[str]) -> list[str]:
    return [f"## {title}", "", *body, "", f"({time.perf_counter() - started:.0f} s, finished "
            f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, load average after: "
            f"{', '.join(f'{x:.2f}' for x in os.getloadavg())})", ""]


def _import() -> list[str]:
    from bench.bench_import import main

    started = time.perf_counter()
    f = main()
    verdict = "met" if f["ratio"] <= 1.5 else "NOT met"
    body = [
        "| turns | import s | turns/s | notes written | texts (distinct) | floor s (before / after) | ratio | target "
        "| CPU s: import + database / floor | load before |",
        "|---|---|---|---|---|---|---|---|---|---|",
        f"| {f['turns']} | {f['seconds']} | {f['turns_per_s']} | {f['notes_written']} | {f['texts']} ({f['distinct_texts']}) "
        f"| {f['floor_seconds']} ({f['floor_before']} / {f['floor_after']}) | **{f['ratio']}x** | ≤ 1.5x ({verdict}) "
        f"| {f['import_cpu_seconds']} + {f['database_cpu_seconds']} / {f['floor_cpu_seconds']} | {f['load'][0]} |",
    ]
    body.append(f"\nOf the import's {f['seconds']} s, {f['without_encoder_seconds']} s were spent not waiting for the "
                f"encoder (storing, extracting, routing): "
                f"{1000 * f['without_encoder_seconds'] / max(f['turns'], 1):.0f} ms a turn, what stays here with an "
                f"embeddings server (docs/performance.md).")
    if "per_turn_seconds" in f:
        body.append(f"\nPer-turn path on the same transcript: {f['per_turn_seconds']} s, ratio {f['per_turn_ratio']}x.")
    return _section("Import (bench/bench_import.py)", started, body)


def _search() -> list[str]:
    from bench.bench_search import STAGES, main

    started = time.perf_counter()
    rows = main()
    body = ["| firm notes | table notes | messages | layered p50 / p95 ms | bare p50 / p95 ms | ratio p95 | target | "
            "recall@10 | RSS MB | load |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        verdict = "met" if r["ratio_p95"] <= 1.5 else "NOT met"
        body.append(f"| {r['firm_notes']:,} | {r['table_notes']:,} | {r.get('messages', 0):,} | {r['p50_ms']} / {r['p95_ms']} "
                    f"| {r['bare_p50_ms']} / {r['bare_p95_ms']} | **{r['ratio_p95']}x** | ≤ 1.5x ({verdict}) "
                    f"| {r['recall@10']['overall']} | {r.get('rss_mb')} | {r['load_average_1m']} |")
    for r in rows:  # where the time goes (docs/performance.md, "Search")
        if "one_connection_p50_ms" in r:
            body.append(f"\nThe same searches on one connection (SEARCH_PARALLEL_READS off, interleaved) at "
                        f"{r['firm_notes']:,} notes: p50 / p95 {r['one_connection_p50_ms']} / "
                        f"{r['one_connection_p95_ms']} ms, ratio p95 {r['one_connection_ratio_p95']}x.")
        if "raw_turns_p50_ms" in r:
            body.append(f"\nA dense + keyword search over the raw turns alone (the user's messages read as "
                        f"`layered` reads them, the keyword best while the query encodes; interleaved; the "
                        f"evaluation's recall baseline) at "
                        f"{r['firm_notes']:,} notes: p50 / p95 {r['raw_turns_p50_ms']} / {r['raw_turns_p95_ms']} ms, "
                        f"{r.get('raw_turns_over_bare_p95')}x the bare p95 by itself; `layered` p95 over it "
                        f"{r['raw_turns_ratio_p95']}x.")
        if "repeated_p50_ms" in r:
            body.append(f"\nA question asked again (its query vector remembered, SEARCH_QUERY_CACHE_SIZE; not "
                        f"in the ratio) at {r['firm_notes']:,} notes: p50 / p95 {r['repeated_p50_ms']} / "
                        f"{r['repeated_p95_ms']} ms.")
        body.append(f"\nStages of `layered` at {r['firm_notes']:,} notes, p50 / p95 ms: " + ", ".join(
            f"{stage} {r.get(f'{stage}_p50_ms', 0.0)} / {r.get(f'{stage}_p95_ms', 0.0)}" for stage in STAGES
        ) + ".")
    return _section("Layered search vs one encode + one pgvector top-k (bench/bench_search.py)", started, body)


def _query_encoding() -> list[str]:
    from bench.bench_query_encoding import main

    started = time.perf_counter()
    rows = main()
    short = next(r for r in rows if r.get("short30"))
    body = ["| question | chars | tokens encoded | p50 / p95 ms | p95 / 30-char p95 | target |", "|---|---|---|---|---|---|"]
    for r in rows:
        ratio = round(r["p95_ms"] / short["p95_ms"], 2)
        body.append(f"| {r['label']} | {r['chars']} | {r['tokens']} | {r['p50_ms']} / {r['p95_ms']} | **{ratio}x** "
                    f"| ≤ 2x ({'met' if ratio <= 2 else 'NOT met'}) |")
    return _section("Query encoding (bench/bench_query_encoding.py)", started, body)


def _memory() -> list[str]:
    from bench.bench_memory import main

    started = time.perf_counter()
    f = main()
    body = ["| chat turns | RSS start / first sample / half / end MB | growth over the second half MB | per 100 turns MB |",
            "|---|---|---|---|",
            f"| {f['turns']} | {f['rss_start_mb']} / {f['rss_after_first_sample_mb']} / {f['rss_half_mb']} / "
            f"{f['rss_end_mb']} | {f['growth_second_half_mb']} | {f['growth_per_100_turns_second_half_mb']} |"]
    return _section("Memory over chat turns (bench/bench_memory.py)", started, body)


def _navigation() -> list[str]:
    from bench.bench_navigation import main

    started = time.perf_counter()
    rows = main()
    body = ["| notes (one key) | navigation cache entry MB | cold build s | warm page ms |", "|---|---|---|---|"]
    body += [f"| {r['notes']:,} | {r['cache_entry_mb']} | {r['cold_build_s']} | {r['warm_ms']} |" for r in rows]
    return _section("Navigation cache (bench/bench_navigation.py)", started, body)


PARTS = {"import": _import, "query_encoding": _query_encoding, "search": _search, "memory": _memory,
         "navigation": _navigation}


#: ``make bench`` sizes: the 100k-note search with as many messages, the 10k-note navigation key.
DEFAULTS = {"BENCH_TURNS": "300", "BENCH_SIZES": "100000", "BENCH_OTHER": "100000", "BENCH_MESSAGES": "100000",
            "BENCH_QUERIES": "100", "BENCH_RECALL_QUERIES": "20", "BENCH_NAV_SIZES": "10000",
            "BENCH_NAV_QUERIES": "50", "BENCH_CHAT_TURNS": "1000"}


def _sections(text: str) -> dict[str, str]:
    """The "## " sections of an earlier RESULTS.md, by heading (each says its own run's load)."""
    parts = text.split("\n## ")[1:]
    return {f"## {p.split(chr(10), 1)[0]}": f"## {p}".rstrip() + "\n" for p in parts}


def main() -> None:
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    only = [p for p in os.environ.get("BENCH_ONLY", ",".join(PARTS)).split(",") if p]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [
        "# Benchmark results", "",
        f"Generated by `{COMMAND}` (bench/run_all.py) on {dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC, "
        f"commit {commit or '?'}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average at start {', '.join(f'{x:.2f}' for x in os.getloadavg())}.",
        "Knobs: " + ", ".join(f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("BENCH_")) or "Knobs: defaults",
        "",
        "The machine is shared: absolute times drift; the ratios, measured within one run, are what is judged "
        "(docs/performance.md). Each section names its own time and load average; a section kept from an "
        "earlier run (BENCH_ONLY) says so by its own figures.", "", "",
    ]
    done: dict[str, str] = {}
    for part in only:
        section = "\n".join(PARTS[part]())
        done[section.split("\n", 1)[0]] = section
        kept = _sections(RESULTS.read_text(encoding="utf-8")) if RESULTS.exists() else {}
        # keep what is done if a later part fails; sections of parts not run this time stay as they were
        merged = {**kept, **done}
        RESULTS.write_text("\n".join(lines) + "\n".join(merged.values()) + "\n", encoding="utf-8")
    print(f"[bench] wrote {RESULTS}")
    print(json.dumps({"parts": only}))


if __name__ == "__main__":
    main()
