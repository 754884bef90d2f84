"""Raw-message reads for users with very many messages: driven by indexes, never a pass over all.

Above ``EXACT_MESSAGE_MAX_ROWS`` searchable messages (memory/retrieval/messages.py) a search
finds the same candidates the exact pass would, without reading every message
(docs/read-path.md, "Raw messages at scale"):

- **Document frequencies** (BM25 IDF) come from ``ConversationTerm``: per conversation, how many
  complete messages hold each lexeme, kept by triggers in the transaction of every message
  change. One statement sums them over the searchable conversations (an index probe per
  conversation and word) and subtracts the excluded messages (an id lookup). A query word that
  PostgreSQL splits into several lexemes ("e-mail") is counted on the messages themselves (GIN).
- **Keyword best** (the ``limit`` highest IDF-weighted matches, latest first among equals): the
  messages holding every query word first (GIN intersection), looked for among the latest
  messages before all of them (``recent_window``); when they are too few, a MaxScore
  pass — only messages holding one of the rarest words are scored, and the rarer prefix grows
  until the words left out cannot add up to the ``limit``-th best score. Exact, and a common
  word alone never makes the database score most of the user's messages.
- **Nearest**: the HNSW walk with iterative scan under the conversation filter.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from memory.models.conversations import SEARCH_CONFIG

# Scores closer than this are equal (sums of the same IDF values in another order).
SCORE_EPSILON = 1e-9
# The latest-messages window of the every-word read is sized to hold this many times ``limit``
# matches (docs/performance.md, "Third round"); a window at least half of all is not worth it.
WINDOW_SLACK = 2


@dataclass(frozen=True)
class Frequencies:
    """The searchable messages (``total``) and how many of them hold each query word."""

    total: int
    per_word: tuple[int, ...]

    def idf(self) -> list[float]:
        """BM25's inverse document frequency of each word (0 for a word no message holds)."""
        return [bm25_idf(self.total, df) if df else 0.0 for df in self.per_word]


def bm25_idf(total: int, frequency: int) -> float:
    """BM25's inverse document frequency (never negative)."""
    return math.log(1.0 + (total - frequency + 0.5) / (frequency + 0.5))


def read_frequencies(
    cursor, conversation_ids: list[int], excluded: list[int], scope: str, scope_params: list, words: Sequence[str]
) -> Frequencies:
    """Total searchable messages and each word's document frequency, from ``ConversationTerm``
    minus the excluded messages: ONE statement, no pass over the messages."""
    cursor.execute(
        "WITH query_words AS MATERIALIZED (SELECT t.i, plainto_tsquery(%s::regconfig, t.word) AS q, "
        "tsvector_to_array(to_tsvector(%s::regconfig, t.word)) AS lexemes "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS t(word, i)), "
        "excluded AS MATERIALIZED (SELECT m.search_vector FROM memory_message m "
        "WHERE m.id = ANY(%s) AND m.conversation_id = ANY(%s) AND m.status = 'complete') "
        "SELECT (SELECT COALESCE(sum(c.messages), 0) FROM memory_conversationterm c "
        "WHERE c.conversation_id = ANY(%s) AND c.lexeme = '') - (SELECT count(*) FROM excluded), "
        "ARRAY(SELECT CASE WHEN numnode(w.q) = 0 THEN 0 "
        "WHEN cardinality(w.lexemes) = 1 THEN (SELECT COALESCE(sum(c.messages), 0) FROM memory_conversationterm c "
        "WHERE c.conversation_id = ANY(%s) AND c.lexeme = w.lexemes[1]) "
        "- (SELECT count(*) FROM excluded e WHERE e.search_vector @@ w.q) "
        f"ELSE (SELECT count(*) FROM memory_message m WHERE {scope} AND m.search_vector @@ w.q) END "
        "FROM query_words w ORDER BY w.i)",
        [SEARCH_CONFIG, SEARCH_CONFIG, list(words), excluded, conversation_ids, conversation_ids,
         conversation_ids, *scope_params],
    )
    total, per_word = cursor.fetchone()
    return Frequencies(int(total), tuple(int(df) for df in per_word))


def _word_query(count: int, operator: str) -> str:
    """``count`` query words as one tsquery (each word's lexemes ANDed, as ``plainto_tsquery``)."""
    return "(" + f" {operator} ".join([f"plainto_tsquery('{SEARCH_CONFIG}'::regconfig, %s)"] * count) + ")"


def keyword_best(
    cursor, scope: str, scope_params: list, words: Sequence[str], idf: Sequence[float], frequencies: Sequence[int],
    *, limit: int, total: int = 0, conversation_ids: Sequence[int] = (),
) -> list[int]:
    """The ids of the ``limit`` messages of ``scope`` with the highest sum of the IDF of the query
    words they hold (latest first among equal sums) — what the exact pass returns. With the
    ``total`` searchable messages and the ``conversation_ids`` of ``scope``, the every-word read
    looks at the latest messages first (``recent_window``)."""
    weighted = sorted(
        ((weight, df, word) for word, weight, df in zip(words, idf, frequencies) if weight > 0),
        key=lambda item: -item[0],
    )  # rarest first
    if not weighted:
        return []
    every = [word for _weight, _df, word in weighted]
    window = recent_window(total, [df for _weight, df, _word in weighted], len(conversation_ids), limit=limit)
    ids = _holding_every_word(cursor, scope, scope_params, every, limit=limit,
                              recent=(list(conversation_ids), *window) if window else None)
    if len(ids) == limit or len(weighted) == 1:  # all hold every word: the highest possible sum, latest first
        return ids
    prefix, matching = 0, 0
    while prefix < len(weighted) and matching < limit:  # the rarest words hold enough messages
        matching += weighted[prefix][1]
        prefix += 1
    while True:
        essential = [word for _weight, _df, word in weighted[:prefix]]
        rows = _scored(cursor, scope, scope_params, weighted, essential, "||", limit=limit)
        if prefix == len(weighted):
            return [row[0] for row in rows]
        threshold = float(rows[-1][1]) if len(rows) == limit else 0.0
        needed = prefix
        # A message holding none of the first ``needed`` words scores at most the rest's sum.
        while needed < len(weighted) and sum(w for w, _df, _word in weighted[needed:]) >= threshold - SCORE_EPSILON:
            needed += 1
        if needed == prefix:
            return [row[0] for row in rows]
        prefix = needed


def recent_window(total: int, frequencies: Sequence[int], conversations: int, *,
                  limit: int) -> tuple[int, int] | None:
    """How many of the latest searchable messages should hold ``limit`` messages with every
    word ``WINDOW_SLACK`` times over (the words taken as independent), and the rank in each
    conversation of the bound the window's start is chosen among (``_holding_every_word``); None when the window would
    be half of all messages or more (reading them all is as cheap)."""
    if total <= 0 or conversations <= 0 or not frequencies:
        return None
    share = math.prod(min(df, total) / total for df in frequencies)
    if share <= 0:
        return None
    size = math.ceil(WINDOW_SLACK * limit / share)
    if 2 * size >= total:
        return None
    return size, math.ceil(2 * size / conversations)


def _holding_every_word(cursor, scope: str, scope_params: list, words: list[str], *, limit: int,
                        recent: tuple[list[int], int, int] | None = None) -> list[int]:
    """The latest ``limit`` messages of ``scope`` holding every word (GIN intersection): no
    score to compute, they all have the highest possible one.

    Each row the GIN index names is a heap visit (to check its conversation, status and when
    it was said), thousands for common words. With ``recent`` (the conversations, the window
    size and how many of each conversation's latest to read: ``recent_window``) the read first
    keeps to the messages at or after the window's start: each conversation's
    ``per_conversation``-th latest message (by ``said_at``, then id; index-only reads of
    ``message_conv_said_id_idx``) is a bound, and the start is the median bound, so half the
    conversations give at least ``per_conversation`` messages each (``size`` in all) and a
    dormant conversation does not stretch the window. Every message outside it comes after every one inside in
    the order of the answer, so ``limit`` rows found inside are exactly the answer; fewer, and
    the read runs again over all messages."""
    matching = f"SELECT m.id FROM memory_message m WHERE {scope} AND m.search_vector @@ {_word_query(len(words), '&&')}"
    latest_first = " ORDER BY m.said_at DESC, m.id DESC LIMIT %s"
    if recent is not None:
        conversation_ids, size, per_conversation = recent
        cursor.execute(
            "WITH bounds AS MATERIALIZED (SELECT b.said_at, b.id FROM unnest(%s::bigint[]) AS c(id) CROSS JOIN LATERAL ("
            "SELECT n.said_at, n.id FROM memory_message n WHERE n.conversation_id = c.id "
            "ORDER BY n.said_at DESC, n.id DESC OFFSET %s LIMIT 1) b), "
            "start AS MATERIALIZED (SELECT said_at, id FROM bounds ORDER BY said_at DESC, id DESC OFFSET %s LIMIT 1) "
            f"{matching} AND (m.said_at, m.id) >= ((SELECT said_at FROM start), (SELECT id FROM start)){latest_first}",
            [conversation_ids, per_conversation - 1, (len(conversation_ids) + 1) // 2 - 1,
             *scope_params, *words, limit],
        )
        ids = [row[0] for row in cursor.fetchall()]
        if len(ids) == limit:
            return ids
    cursor.execute(matching + latest_first, [*scope_params, *words, limit])
    return [row[0] for row in cursor.fetchall()]


def _scored(
    cursor, scope: str, scope_params: list, weighted: list[tuple[float, int, str]], filter_words: list[str],
    operator: str, *, limit: int,
) -> list[tuple[int, float]]:
    """(id, score) of the best ``limit`` messages of ``scope`` holding ``filter_words`` (AND or OR,
    through the GIN index), scored on every weighted word."""
    score = " + ".join(
        f"CASE WHEN m.search_vector @@ plainto_tsquery('{SEARCH_CONFIG}'::regconfig, %s) THEN {weight!r} ELSE 0 END"
        for weight, _df, _word in weighted
    )
    cursor.execute(
        f"SELECT m.id, round(({score})::numeric, 9) AS score FROM memory_message m "
        f"WHERE {scope} AND m.search_vector @@ {_word_query(len(filter_words), operator)} "
        "ORDER BY score DESC, m.said_at DESC, m.id DESC LIMIT %s",
        [*(word for _weight, _df, word in weighted), *scope_params, *filter_words, limit],
    )
    return cursor.fetchall()
