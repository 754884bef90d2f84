"""Records benchmark (docs/records.md): export and erasure of a matter of N notes.

    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage migrate -v 0
    LEGALMEM_DATA_DIR=var/bench .venv/bin/python -m legalmem_site.launcher manage shell -c "from bench.bench_records import main; main()"

For each size in ``BENCH_RECORDS_SIZES`` (default 1000,5000): a new firm with one matter holding
that many notes (random unit vectors, bulk-inserted, each with its ``note_created`` audit entry
and a source message), plus one neighbour matter of the same size that must survive. Then it
times the dry run, the JSON export, and the erasure (one transaction: tombstone, audit
redaction, deletes), and checks the neighbour is intact. The firm rows stay (erased matters
remain as references); the data folder is the benchmark's own.
"""
from __future__ import annotations

import os
import time
import uuid

import numpy as np
from django.conf import settings
from django.db import connection
from django.utils import timezone

from memory.models import AuditEvent, AuditLog, Conversation, Firm, Matter, Membership, Message, Note, Role
from records.export import matter_document
from records.erasure import erase, matter_unit, preview


def _fill(firm: Firm, matter: Matter, user, size: int, rng: np.random.Generator) -> None:
    conversation = Conversation.objects.create(firm=firm, user=user, matter=matter, title="bench")
    now = timezone.now()
    messages = Message.objects.bulk_create([
        Message(conversation=conversation, firm=firm, role="user", speaker="bench", content=f"说过的话 {i}",
                said_at=now, search_text=f"说过 话 {i}") for i in range(size)
    ])
    vectors = rng.standard_normal((size, settings.NOTE_EMBEDDING_DIMENSIONS)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    notes = [
        Note(id=uuid.uuid4(), firm=firm, content=f"案件事实 {matter.pk}-{i}", memory_scope="case", category="fact",
             matter=matter, conversation=conversation, source_type="chat", source_message_ids=[messages[i].pk],
             content_hash=uuid.uuid4().hex, search_text=f"案件 事实 {i}", embedding=vectors[i])
        for i in range(size)
    ]
    Note.objects.bulk_create(notes, batch_size=1000)
    AuditLog.objects.bulk_create([
        AuditLog(firm=firm, matter=matter, actor_label="bench", event_type=AuditEvent.NOTE_CREATED,
                 object_type="note", object_id=str(n.pk), after={"content": n.content}) for n in notes
    ], batch_size=1000)


def run(size: int, rng: np.random.Generator) -> dict[str, float]:
    from django.contrib.auth import get_user_model

    tag = uuid.uuid4().hex[:8]
    firm = Firm.objects.create(name=f"bench records {tag}", slug=f"bench-records-{tag}")
    user = get_user_model().objects.create(username=f"bench-records-{tag}")
    Membership.objects.create(user=user, firm=firm, role=Role.ADMIN)
    target = Matter.objects.create(firm=firm, title="erased", reference=f"E-{tag}")
    neighbour = Matter.objects.create(firm=firm, title="kept", reference=f"K-{tag}")
    _fill(firm, target, user, size, rng)
    _fill(firm, neighbour, user, size, rng)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memory_note; ANALYZE memory_message; ANALYZE memory_auditlog")
    figures = {}
    started = time.perf_counter()
    counts = preview(matter_unit(target)).counts
    figures["dry run s"] = time.perf_counter() - started
    started = time.perf_counter()
    document = matter_document(target)
    figures["JSON export s"] = time.perf_counter() - started
    assert len(document["notes"]) == size
    started = time.perf_counter()
    result = erase(matter_unit(target), actor="system:bench", reason="benchmark")
    figures["erasure s"] = time.perf_counter() - started
    assert result.counts["notes"] == size == counts["notes"]
    assert result.counts["audit_entries_redacted"] >= size
    assert Note.objects.filter(matter=neighbour).count() == size
    return figures


def main() -> None:
    sizes = [int(s) for s in os.environ.get("BENCH_RECORDS_SIZES", "1000,5000").split(",") if s.strip()]
    rng = np.random.default_rng(16)
    load = os.getloadavg()[0]
    print(f"records benchmark (load average {load:.1f})")
    for size in sizes:
        figures = run(size, rng)
        print(f"  matter of {size} notes (+{size} messages, {size} audit entries): "
              + ", ".join(f"{name} {value:.2f}" for name, value in figures.items()))
