"""Encoding rows into the shadow columns, in batches, resumably.

The shadow column is the queue: a row needs encoding while it has a live vector and no shadow
one (``embedding IS NOT NULL AND embedding_next IS NULL``). A killed run leaves only whole
batches behind, so running again continues where it stopped and encodes nothing twice. Each
batch is written only to rows unchanged since they were read (same ``xmin``): a row the live
path rewrote meanwhile stays queued for the next pass instead of getting a stale vector.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from django.db import connection, transaction
from pgvector import Vector

from infra.embeddings import Embedder
from memory.models import EmbeddingGeneration
from memory.services.embedding_generations import embedding_generation_count_batch
from memory.embedding_schema.tables import VECTOR_TABLES, VectorTable

PENDING = "embedding IS NOT NULL AND embedding_next IS NULL"
MAX_PASSES = 20  # passes over the tables before giving up on rows that keep changing


@dataclass
class EncodeResult:
    encoded: int = 0
    batches: int = 0
    encoder_seconds: float = 0.0  # of which the encoder alone (the rest: reading and writing rows)
    stopped_early: bool = False  # --max-batches reached: the rest stays queued


def pending_count(spec: VectorTable) -> int:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT count(*) FROM {spec.table} WHERE {PENDING}")
        return cursor.fetchone()[0]


def table_progress() -> dict[str, dict[str, int]]:
    """Per table: rows with a live vector (``total``) and of those, rows with a shadow one."""
    progress = {}
    with connection.cursor() as cursor:
        for spec in VECTOR_TABLES:
            cursor.execute(
                f"SELECT count(*) FILTER (WHERE embedding IS NOT NULL), "
                f"count(*) FILTER (WHERE embedding IS NOT NULL AND embedding_next IS NOT NULL) FROM {spec.table}"
            )
            total, encoded = cursor.fetchone()
            progress[spec.table] = {"total": total, "encoded": encoded}
    return progress


def _read_batch(spec: VectorTable, after: str | None, size: int) -> list[dict]:
    columns = ", ".join(spec.text_columns)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id::text, xmin::text, {columns} FROM {spec.table} "
            f"WHERE {PENDING} AND (%s::text IS NULL OR id > %s::{spec.id_type}) ORDER BY id LIMIT %s",
            [after, after, size],
        )
        names = ["id", "xmin", *spec.text_columns]
        return [dict(zip(names, row)) for row in cursor.fetchall()]


def _write_batch(spec: VectorTable, rows: list[dict], vectors, identity: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {spec.table} AS t SET embedding_next = d.v::vector, embedding_model_next = %s "
            f"FROM unnest(%s::text[], %s::text[], %s::text[]) AS d(id, xv, v) "
            f"WHERE t.id = d.id::{spec.id_type} AND t.xmin::text = d.xv "
            f"AND t.embedding IS NOT NULL AND t.embedding_next IS NULL",
            [identity, [r["id"] for r in rows], [r["xmin"] for r in rows],
             [Vector._to_db(v) for v in vectors]],
        )
        return cursor.rowcount


def encode_pending(
    generation: EmbeddingGeneration,
    embedder: Embedder,
    *,
    batch_size: int,
    max_batches: int | None = None,
    report: Callable[[str], None] | None = None,
) -> EncodeResult:
    """Encode every queued row of every vector table, pass after pass until none is left
    (rows written meanwhile are queued again by the trigger). Progress is stored on the
    generation after each batch; raises what the embedder raises (the rest stays queued)."""
    result = EncodeResult()
    for _ in range(MAX_PASSES):
        found = 0
        for spec in VECTOR_TABLES:
            after = None
            while True:
                if max_batches is not None and result.batches >= max_batches:
                    result.stopped_early = True
                    return result
                rows = _read_batch(spec, after, batch_size)
                if not rows:
                    break
                found += len(rows)
                after = rows[-1]["id"]
                started = time.perf_counter()
                encoding = time.perf_counter()
                vectors = embedder.embed_passages([spec.text_of(row) for row in rows])
                result.encoder_seconds += time.perf_counter() - encoding
                with transaction.atomic():  # the vectors and their count: a kill keeps both or neither
                    written = _write_batch(spec, rows, vectors, generation.identity)
                    seconds = time.perf_counter() - started
                    embedding_generation_count_batch(generation, written=written, seconds=seconds)
                result.encoded += written
                result.batches += 1
                if report:
                    report(f"{spec.table}: {written} encoded in {seconds * 1000:.0f} ms "
                           f"(batch {result.batches}, {result.encoded} this run)")
        if not found:
            return result
    raise RuntimeError(f"rows kept changing through {MAX_PASSES} passes; run reembed again")
