"""Search at a moment: what the firm's memory held then, or what held in the world then.

``as_of`` (system time): the notes current in memory at that moment (``Note.objects.as_of`` —
stored by then, not yet superseded or forgotten). ``valid_at`` (world time): the notes whose fact
held then as the memory knows it now (``Note.objects.valid_at`` — said by then, not yet replaced
by a successor said by then); both together: what held at ``valid_at`` as known at ``as_of``.
The candidates — the notes the user may see, in the searched layers and, for case facts, the
searched matter — are ranked by cosine distance to the question, read exactly (no HNSW walk: the
index holds today's current notes). Messages and document passages are not searched at a moment
(a passage uploaded later would answer with what the firm did not yet know). A hit whose value was
replaced afterwards says so in its reasons, with when (docs/memory-model.md, "Two times"). Walls
apply as now; erased notes no longer exist.
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


def as_of_search(request: SearchRequest, as_of: datetime | None = None,
                 valid_at: datetime | None = None) -> SearchResult:
    """The ``k`` notes current at ``as_of`` and/or holding at ``valid_at`` that best answer the
    request's query."""
    started = time.perf_counter()
    reach = request.reach or reach_of(request.user)
    notes = Note.objects.visible_to(request.user, firm_ids=reach.firm_ids, matter_ids=reach.matter_ids)
    if valid_at is not None:  # what held then, as the memory knew it at ``as_of`` (or now)
        notes = notes.valid_at(valid_at, as_of=as_of)
    elif as_of is not None:
        notes = notes.as_of(as_of)
    notes = notes.filter(embedding__isnull=False)
    if request.scopes:
        notes = notes.filter(memory_scope__in=request.scopes)
    if request.matter_id is not None:
        notes = notes.filter(~Q(memory_scope=MemoryScope.CASE) | Q(matter_id=request.matter_id))
    rows = list(notes.select_related("matter", "owner").defer("embedding")
                .annotate(distance=CosineDistance("embedding", request.query_vector))
                .order_by("distance", "pk")[:request.k])
    hits = []
    for rank, note in enumerate(rows, start=1):
        if as_of is not None:  # read only: the wording the memory held then, not a later correction's
            note.content = note.content_at(as_of)
        hits.append(Hit(note=note, layer=note.memory_scope, rank=rank, breakdown=semantic_only(note, note.distance),
                        reasons=_reasons(note, as_of, valid_at)))
    return SearchResult(strategy=request.strategy, query=request.query, plan=request.plan, hits=hits,
                        timings={"as_of": round((time.perf_counter() - started) * 1000, 2)},
                        stats={"candidates": len(rows)})


def _when(moment: datetime) -> str:
    return f"{timezone.localtime(moment):%Y-%m-%d %H:%M}"


def _reasons(note: Note, as_of: datetime | None, valid_at: datetime | None) -> list[str]:
    reasons = []
    if valid_at is not None:
        reasons.append(gettext("held on %(when)s") % {"when": _when(valid_at)})
    if as_of is not None:
        reasons.append(gettext("current in memory on %(when)s") % {"when": _when(as_of)})
    reasons.append(f"语义相似度 semantic similarity {1 - note.distance:.3f}")
    if note.retired_at is not None:
        reasons.append(gettext("superseded later, on %(when)s") % {"when": _when(note.retired_at)})
    elif note.valid_to is not None and valid_at is not None:
        reasons.append(gettext("replaced by a later statement on %(when)s") % {"when": _when(note.valid_to)})
    return reasons
