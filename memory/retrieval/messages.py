"""Raw-message candidates: every saved turn is a source of every layered search.

The messages a search may read are those of ``Conversation.objects.visible_to(user)`` (the
user's own conversations, only while their matter is still assigned), narrowed to the current
matter's conversations and the matter-less ones when there is a current matter. Two statements
in one transaction:

1. how many of those messages hold each query word (document frequencies, for IDF weights —
   raw chat lines need them: a name or a common verb appears in hundreds of lines);
2. the exact nearest messages by cosine distance (an index-only scan of ``message_conv_vectors``;
   an HNSW walk with iterative scan above ``EXACT_MESSAGE_MAX_ROWS``) UNION the messages with
   the highest IDF-weighted keyword match (stored ``search_vector``), each row with the indexes
   of the query words it holds.

A message not yet embedded (the indexing job has not run) is still found by its keywords.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np
from django.db import connection, transaction
from django.db.models import Q

from memory.models import Conversation, Message
from memory.models.conversations import SEARCH_CONFIG
from memory.retrieval.candidates import _vector_literal
from memory.retrieval.plan import RetrievalPlan

# Below this many visible messages every one is compared (exact); above it the HNSW graph.
EXACT_MESSAGE_MAX_ROWS = 30_000
MAX_QUERY_WORDS = 32
MESSAGE_FIELDS = ("id", "conversation_id", "firm_id", "role", "speaker", "content", "status", "said_at", "search_text")


@dataclass
class MessageCandidate:
    message: Message
    distance: float | None = None
    matched_words: list[str] = field(default_factory=list)
    keyword: float = 0.0  # IDF-weighted share of the query words the message holds
    via_vector: bool = False
    via_keyword: bool = False


def searchable_conversation_ids(user, plan: RetrievalPlan) -> list[int]:
    """The conversations whose messages this search may read (always through ``visible_to``)."""
    conversations = Conversation.objects.visible_to(user)
    if plan.matter_id is not None:
        conversations = conversations.filter(Q(matter_id=plan.matter_id) | Q(matter__isnull=True))
    return list(conversations.values_list("pk", flat=True))


def _idf(total: int, frequency: int) -> float:
    """BM25's inverse document frequency (never negative)."""
    return math.log(1.0 + (total - frequency + 0.5) / (frequency + 0.5))


def message_candidates(
    user,
    plan: RetrievalPlan,
    vector: np.ndarray,
    tokens: Sequence[str],
    *,
    limit: int,
    exclude_ids: Iterable[int] = (),
    ef_search: int = 200,
) -> list[MessageCandidate]:
    """The ``limit`` nearest visible messages plus the ``limit`` best keyword matches (deduplicated)."""
    conversation_ids = searchable_conversation_ids(user, plan)
    if not conversation_ids:
        return []
    words = list(tokens[:MAX_QUERY_WORDS])
    excluded = list(exclude_ids) or [0]
    scope = "m.conversation_id = ANY(%s) AND m.status = %s AND NOT (m.id = ANY(%s))"
    scope_params = [conversation_ids, Message.Status.COMPLETE, excluded]
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT (SELECT count(*) FROM memory_message m WHERE {scope}), "
                f"ARRAY(SELECT (SELECT count(*) FROM memory_message m WHERE {scope} AND m.search_vector @@ w.q) "
                f"FROM (SELECT plainto_tsquery(%s::regconfig, t.word) AS q, t.i FROM unnest(%s::text[]) "
                f"WITH ORDINALITY AS t(word, i)) w ORDER BY w.i)",
                [*scope_params, *scope_params, SEARCH_CONFIG, words],
            )
            total, frequencies = cursor.fetchone()
            if not total:
                return []
            idf = [_idf(total, df) if df else 0.0 for df in frequencies]
            exact = total <= EXACT_MESSAGE_MAX_ROWS
            cursor.execute(
                "SELECT set_config('hnsw.ef_search', %s, true), "
                "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                [str(max(ef_search, limit))],
            )
            rows = _read(cursor, scope, scope_params, vector, words, idf, limit=limit, exact=exact)
    total_idf = sum(idf) or 1.0
    found: list[MessageCandidate] = []
    alias = connection.alias
    width = len(MESSAGE_FIELDS)
    for row in rows:
        message = Message.from_db(alias, list(MESSAGE_FIELDS), row[:width])
        distance, matched, src = row[width], row[width + 1], row[width + 2]
        indexes = [i - 1 for i in (matched or [])]
        found.append(MessageCandidate(
            message=message,
            distance=None if distance is None else float(distance),
            matched_words=[words[i] for i in indexes],
            keyword=round(sum(idf[i] for i in indexes) / total_idf, 4),
            via_vector=0 in src,
            via_keyword=1 in src,
        ))
    return found


def _read(cursor, scope: str, scope_params: list, vector: np.ndarray, words: list[str], idf: list[float],
          *, limit: int, exact: bool) -> list[tuple]:
    """Statement 2: nearest + keyword candidates, joined to their columns, with matched word indexes."""
    columns = ", ".join(f"m.{name}" for name in MESSAGE_FIELDS)
    distance = "(m.embedding <=> (SELECT v FROM query_vector))"
    order = f"{distance} + 0" if exact else distance  # "+ 0": no HNSW, compare every row
    weighted = [(i + 1, weight) for i, weight in enumerate(idf) if weight > 0]
    parts = [
        f"(SELECT m.id, 0 AS src FROM memory_message m WHERE {scope} AND m.embedding IS NOT NULL "
        f"ORDER BY {order} LIMIT %s)"
    ]
    params: list = [_vector_literal(vector), SEARCH_CONFIG, words, *scope_params, limit]
    if weighted:
        score = " + ".join(
            f"CASE WHEN m.search_vector @@ (SELECT q FROM query_words WHERE i = {i}) THEN {weight!r} ELSE 0 END"
            for i, weight in weighted
        )
        any_word = " || ".join(f"(SELECT q FROM query_words WHERE i = {i})" for i, _ in weighted)
        parts.append(
            f"(SELECT m.id, 1 AS src FROM memory_message m WHERE {scope} "
            f"AND m.search_vector @@ ({any_word}) ORDER BY ({score}) DESC, m.said_at DESC LIMIT %s)"
        )
        params += [*scope_params, limit]
    sql = (
        "WITH query_vector AS MATERIALIZED (SELECT %s::vector AS v), "
        "query_words AS MATERIALIZED (SELECT t.i, plainto_tsquery(%s::regconfig, t.word) AS q "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS t(word, i)), "
        f"found AS (SELECT u.id, array_agg(DISTINCT u.src) AS src FROM ({' UNION ALL '.join(parts)}) u GROUP BY u.id) "
        f"SELECT {columns}, {distance} AS distance, "
        "ARRAY(SELECT w.i FROM query_words w WHERE numnode(w.q) > 0 AND m.search_vector @@ w.q ORDER BY w.i), "
        "found.src FROM found JOIN memory_message m ON m.id = found.id"
    )
    cursor.execute(sql, params)
    return cursor.fetchall()
