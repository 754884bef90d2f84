"""The notes a new note is compared with: the author's visible, active notes in the same
context (firm, layer, and the same matter — or owner for private case and profile notes),
found with pgvector's HNSW index under ``SET LOCAL hnsw.ef_search`` and
``hnsw.iterative_scan = relaxed_order`` so the filter does not starve the result."""
from __future__ import annotations

import hashlib
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
from django.db import connection, transaction
from django.db.models import Q
from pgvector.django import CosineDistance

from memory.models import MemoryScope, Note
from remember.routing import thresholds
from memory.services.notes import NoteDraft
from memory.transaction_memo import first_time


@dataclass
class Neighbour:
    note: Note
    similarity: float


def context_filter(draft: NoteDraft) -> Q:
    """Same firm, layer and matter (or owner) as the draft, active notes only."""
    q = Q(firm=draft.firm, memory_scope=draft.memory_scope, status=Note.Status.ACTIVE)
    if draft.memory_scope == MemoryScope.USER_PROFILE:
        return q & Q(owner=draft.owner)
    if draft.matter is not None:
        return q & Q(matter=draft.matter)
    if draft.memory_scope == MemoryScope.CASE:
        return q & Q(matter__isnull=True, owner=draft.owner)
    return q & Q(matter__isnull=True)


def _set_search_parameters() -> None:
    """Recall settings for one filtered HNSW query; SET LOCAL needs the surrounding transaction
    (and holds until it ends: once per turn in the bulk import, memory/transaction_memo.py)."""
    if not first_time("hnsw-search-parameters"):
        return
    with connection.cursor() as cursor:  # one round trip for both (docs/performance.md)
        cursor.execute(
            "SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'relaxed_order', true)",
            [str(thresholds.ROUTING_HNSW_EF_SEARCH)],
        )


def nearest_notes(draft: NoteDraft, embedding: np.ndarray, *, k: int | None = None) -> list[Neighbour]:
    """The k nearest active notes in the draft's context that its author may see, closest first."""
    k = k or thresholds.ROUTING_NEIGHBOURS
    # SET LOCAL needs a transaction; inside the writer's own one a savepoint adds two round trips.
    with nullcontext() if connection.in_atomic_block else transaction.atomic():
        _set_search_parameters()
        rows = list(
            Note.objects.visible_to(draft.owner)
            .filter(context_filter(draft))
            .with_embedding()
            .annotate(distance=CosineDistance("embedding", embedding))
            .order_by("distance")[:k]
        )
    neighbours = [Neighbour(note, 1.0 - float(note.distance)) for note in rows]
    return sorted(neighbours, key=lambda n: -n.similarity)


def lock_context(draft: NoteDraft) -> None:
    """Serialise writes into one context so two workers cannot both ADD the same note."""
    if draft.matter is not None:
        where = f"matter:{draft.matter.pk}"
    elif draft.memory_scope in (MemoryScope.CASE, MemoryScope.USER_PROFILE):
        where = f"owner:{getattr(draft.owner, 'pk', '')}"
    else:
        where = "firm"
    key = f"{draft.firm.pk}:{draft.memory_scope}:{where}"
    lock_id = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)
    if not first_time(("context-lock", lock_id)):  # held until the transaction ends
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock_id])
