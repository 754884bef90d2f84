"""Search "as of" a moment: what the firm's memory held then, ranked by meaning.

The candidates are the notes the user may see that were current at ``as_of`` (system time:
``Note.objects.as_of`` — stored by then, not yet superseded or forgotten), in the searched
layers and, for case facts, the searched matter; they are ranked by cosine distance to the
question, read exactly (no HNSW walk: the index holds today's current notes). Messages and
document passages are not searched "as of" (a passage uploaded later would answer with what the
firm did not yet know). A hit whose note was superseded after ``as_of`` says so in its reasons,
with when (docs/memory-model.md, "Two times"). Walls apply as now; erased notes no longer exist.
"""
from __future__ import annotations

import time
from datetime import datetime

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext
from pgvector.django import CosineDistance

from memory.models import MemoryScope, Note
from recall.reach import reach_of
from recall.scoring import semantic_only
from recall.types import Hit, SearchRequest, SearchResult


def as_of_search(request: SearchRequest, as_of: datetime) -> SearchResult:
    """The ``k`` notes current at ``as_of`` that best answer the request's query."""
    started = time.perf_counter()
    reach = request.reach or reach_of(request.user)
    notes = (Note.objects.visible_to(request.user, firm_ids=reach.firm_ids, matter_ids=reach.matter_ids)
             .as_of(as_of).filter(embedding__isnull=False))
    if request.scopes:
        notes = notes.filter(memory_scope__in=request.scopes)
    if request.matter_id is not None:
        notes = notes.filter(~Q(memory_scope=MemoryScope.CASE) | Q(matter_id=request.matter_id))
    rows = list(notes.select_related("matter", "owner", "superseded_by")
                .annotate(distance=CosineDistance("embedding", request.query_vector))
                .order_by("distance", "pk")[:request.k])
    when = f"{timezone.localtime(as_of):%Y-%m-%d %H:%M}"
    hits = []
    for rank, note in enumerate(rows, start=1):
        reasons = [gettext("current in memory on %(when)s") % {"when": when},
                   f"语义相似度 semantic similarity {1 - note.distance:.3f}"]
        if note.retired_at is not None:
            reasons.append(gettext("superseded later, on %(when)s") % {
                "when": f"{timezone.localtime(note.retired_at):%Y-%m-%d %H:%M}"})
        hits.append(Hit(note=note, layer=note.memory_scope, rank=rank, breakdown=semantic_only(note, note.distance),
                        reasons=reasons))
    return SearchResult(strategy=request.strategy, query=request.query, plan=request.plan, hits=hits,
                        timings={"as_of": round((time.perf_counter() - started) * 1000, 2)},
                        stats={"candidates": len(rows)})
