"""Notes loaded by what points at them rather than found by a walk: the notes the found messages
became (``notes_from_messages``, by provenance, for an explicit reference to what was said) and
the final hits in full (``hydrate``). Both read under ``visible_to(user)``.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np
from django.db import connection
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

from memory.models import Note
from infra.embeddings.literals import vector_literal
from recall.candidate_sql import _light_columns
from recall.instances import fast_timestamps, instance_from_row
from recall.layer_rules import _layers_condition
from recall.note_candidate import NoteCandidate
from recall.plan import RetrievalPlan
from recall.reach import Reach, _visible_where


def _sourced_by(message_ids: list[int]) -> RawSQL:
    """The notes whose provenance holds one of ``message_ids``, found first (an InitPlan) in the
    GIN index one message at a time. As one ``&&`` condition the planner guesses 0.5% of the
    notes per message — for 40 messages a sequential scan (87 ms at 200k notes) — and as
    ``id IN (subquery)`` it folds the subquery back and ANDs it with every layer's bitmap (~4 ms)."""
    return RawSQL(
        '"memory_note"."id" = ANY(ARRAY(SELECT s.id FROM unnest(%s::bigint[]) AS m(id) CROSS JOIN LATERAL '
        "(SELECT n.id FROM memory_note n WHERE n.source_message_ids @> ARRAY[m.id]) s))",
        (message_ids,), output_field=BooleanField(),
    )


def notes_from_messages(
    user, plan: RetrievalPlan, reach: Reach, message_ids: Sequence[int], vector: np.ndarray, *, limit: int
) -> list[NoteCandidate]:
    """Visible notes whose provenance includes one of ``message_ids`` (GIN index
    ``note_source_messages_gin``), the ``limit`` nearest the query: one statement on the
    compiled rule (``_visible_where``, the layers' rule from ``layer_rule``), light instances.

    Sorted by ``distance + 0``: ordered by the bare distance, the planner walked the HNSW index
    and filtered the few notes it met (default ``ef_search``, no iterative scan), so at 100k notes
    none of the notes the messages became was found (docs/performance.md, "Sixth round"). Built
    through the ORM the read cost ~9 ms at 100k notes, of which PostgreSQL ran 0.8 (the rest:
    building and compiling the queryset, converting the vector again); now ~2 ms
    (docs/performance.md, "Seventh round")."""
    visible = _visible_where(user, reach) if reach.firm_ids and message_ids else None
    if visible is None or not plan.layers:
        return []
    names, columns = _light_columns()
    sourced = _sourced_by(list(message_ids))
    layer_sql, layer_params = _layers_condition(plan, reach, plan.layers)
    distance = "(\"memory_note\".\"embedding\" <=> (SELECT v FROM query_vector))"
    with connection.cursor() as cursor:
        fast_timestamps(cursor)
        cursor.execute(
            f"WITH query_vector AS MATERIALIZED (SELECT %s::vector AS v) "
            f"SELECT {', '.join(columns)}, {distance} AS distance FROM memory_note "
            f"WHERE ({visible.sql}) AND {layer_sql} AND {sourced.sql} ORDER BY {distance} + 0 LIMIT %s",
            [vector_literal(vector), *visible.params, *layer_params, *sourced.params, limit],
        )
        rows = cursor.fetchall()
    alias, width = connection.alias, len(names)
    return [
        NoteCandidate(
            note=instance_from_row(Note, alias, names, row[:width]),
            distance=None if row[width] is None else float(row[width]),
            via_message=True,
        )
        for row in rows
    ]


def hydrate(user, reach: Reach, note_ids: Sequence) -> dict:
    """The full notes (firm, matter, owner joined) for the final hits — still through visible_to,
    with the firm and matter ids of ``reach`` as literals (the subquery form cost ~5 ms here)."""
    # The embedding is deferred (still loaded on access): no caller of a hit reads it.
    if not note_ids:
        return {}  # every hit is a raw message: not even the queryset is built
    return (
        Note.objects.visible_to(user, **reach.literals())
        .select_related("firm", "matter", "owner").defer("embedding")
        .in_bulk(list(note_ids))
    )
