"""Who searches, and with which current matter, in the tests that run every user both ways; and
the note statement a search sends, for the tests that EXPLAIN it."""
from __future__ import annotations

from typing import Any

from django.db import connection

from recall.candidate_sql import read_candidates
from recall.hnsw import read_of_statement


def searcher_and_matter(world, who: str, matter: str | None) -> tuple[Any, int | None]:
    """The user named ``who`` (alice, bob, charlie) and the current matter named ``matter`` —
    none when there is no such parameter or the user is not assigned to it (charlie)."""
    user = getattr(world, who)
    matter_id = getattr(world, matter).pk if matter else None
    if matter_id is not None and not getattr(world, matter).assignments.filter(user=user).exists():
        matter_id = None
    return user, matter_id


def note_statement_of(user, plan, reach, vector) -> tuple[str, list]:
    """The one note statement (without its settings) that ``read_candidates`` sends."""
    captured = []

    def grab(execute, sql, params, many, context):
        if "query_vector" in sql:
            captured.append((sql, params))
        return execute(sql, params, many, context)

    with connection.execute_wrapper(grab):
        read_candidates(user, plan, reach, vector, [], per_layer=20)
    assert len(captured) == 1
    return read_of_statement(*captured[0])
