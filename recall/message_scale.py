"""Raw-message reads for users with very many messages: driven by indexes, never a pass over all.

Above ``settings.EXACT_MESSAGE_MAX_ROWS`` searchable messages (recall/messages.py) a search
finds the same candidates the exact pass would, without reading every message
(docs/read-path.md, "Raw messages at scale"):

- **Document frequencies** (BM25 IDF) come from ``ConversationTerm``: per conversation, how many
  complete messages hold each lexeme, kept by triggers in the transaction of every message
  change. One statement sums them over the searchable conversations (an index probe per
  conversation and word) and subtracts the excluded messages (an id lookup). A query word that
  PostgreSQL splits into several lexemes ("e-mail") is counted on the messages themselves (GIN).
- **Keyword best** (the ``limit`` highest IDF-weighted matches, latest first among equals).
  A message's score is the sum of the IDF of the query words it holds, so the messages fall into
  at most 2^words *score levels*. When the words are common, ``best_by_levels`` reads the latest
  messages once (index order, no GIN: ``read_latest``) and walks the levels from the highest:
  the first level the latest messages fill is answered from them, and only the rarer levels
  above it are read through the GIN index (one statement). Otherwise (rare words, many words) the
  messages holding every query word first (GIN intersection), looked for among the latest
  messages before all of them (``recent_window``); when they are too few, a MaxScore
  pass — only messages holding one of the rarest words are scored, and the rarer prefix grows
  until the words left out cannot add up to the ``limit``-th best score. Exact either way, and a
  common word alone never makes the database score most of the user's messages.
- **Nearest**: the HNSW walk with iterative scan under the conversation filter.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from memory.models.conversations import SEARCH_CONFIG

# Scores closer than this are equal (sums of the same IDF values in another order).
SCORE_EPSILON = 1e-9
# The latest-messages window of the every-word read is sized to hold this many times ``limit``
# matches (docs/performance.md, "Third round"); a window at least half of all is not worth it.
WINDOW_SLACK = 2
# Score levels (``best_by_levels``): at most this many weighted words (2^6 - 1 levels), words
# together held by more than this many messages (fewer: the GIN reads below are cheaper), and
# the latest messages read: enough to hold ``WINDOW_SLACK`` x ``limit`` matches, within bounds.
LEVEL_MAX_WORDS = 6
LEVEL_MIN_POSTINGS = 2_000
LATEST_MIN_ROWS = 400
LATEST_MAX_ROWS = 4_000


@dataclass(frozen=True)
class LevelBounds:
    """The bounds of the score-level read (the three constants above); a test passes smaller ones."""

    min_postings: int = LEVEL_MIN_POSTINGS
    latest_min_rows: int = LATEST_MIN_ROWS
    latest_max_rows: int = LATEST_MAX_ROWS


LEVEL_BOUNDS = LevelBounds()
# A message visited through the GIN index (bitmap heap visit, recheck, score) costs about as
# much as this many read in index order (measured at 100k messages: ~12 vs ~3 µs).
GIN_MATCH_COST = 4
# How many times the latest messages are read at most (the first size, then larger ones).
LATEST_READS = 3


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
    *, limit: int, total: int = 0, conversation_ids: Sequence[int] = (), bounds: LevelBounds = LEVEL_BOUNDS,
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
    ids = best_by_levels(cursor, scope, scope_params, weighted, limit=limit, total=total,
                         conversation_ids=conversation_ids, bounds=bounds)
    if ids is not None:
        return ids
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
        rows = _scored(cursor, scope, scope_params, weighted, [[word] for word in essential], limit=limit)
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


# The start of "the latest messages" (CTEs ``bounds`` and ``start``), from the index
# ``message_conv_said_id_idx`` alone: each conversation's ``per_conversation``-th latest message is
# a bound, and the start is the median bound — half the conversations give at least that many
# messages each, and a dormant conversation does not pull the start back.
LATEST_START = (
    "bounds AS MATERIALIZED (SELECT b.said_at, b.id FROM unnest(%s::bigint[]) AS c(id) CROSS JOIN LATERAL ("
    "SELECT n.said_at, n.id FROM memory_message n WHERE n.conversation_id = c.id "
    "ORDER BY n.said_at DESC, n.id DESC OFFSET %s LIMIT 1) b), "
    "start AS MATERIALIZED (SELECT said_at, id FROM bounds ORDER BY said_at DESC, id DESC OFFSET %s LIMIT 1)"
)


def latest_start_params(conversation_ids: Sequence[int], per_conversation: int) -> list:
    """The parameters of ``LATEST_START``."""
    return [list(conversation_ids), per_conversation - 1, (len(conversation_ids) + 1) // 2 - 1]


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
            f"WITH {LATEST_START} "
            f"{matching} AND (m.said_at, m.id) >= ((SELECT said_at FROM start), (SELECT id FROM start)){latest_first}",
            [*latest_start_params(conversation_ids, per_conversation),
             *scope_params, *words, limit],
        )
        ids = [row[0] for row in cursor.fetchall()]
        if len(ids) == limit:
            return ids
    cursor.execute(matching + latest_first, [*scope_params, *words, limit])
    return [row[0] for row in cursor.fetchall()]


def _scored(
    cursor, scope: str, scope_params: list, weighted: list[tuple[float, int, str]], groups: list[list[str]],
    *, limit: int,
) -> list[tuple[int, float]]:
    """(id, score) of the best ``limit`` messages of ``scope`` holding every word of at least one
    of ``groups`` (through the GIN index), scored on every weighted word."""
    score = " + ".join(
        f"CASE WHEN m.search_vector @@ plainto_tsquery('{SEARCH_CONFIG}'::regconfig, %s) THEN {weight!r} ELSE 0 END"
        for weight, _df, _word in weighted
    )
    matching = " || ".join(_word_query(len(group), "&&") for group in groups)
    cursor.execute(
        f"SELECT m.id, round(({score})::numeric, 9) AS score FROM memory_message m "
        f"WHERE {scope} AND m.search_vector @@ ({matching}) "
        "ORDER BY score DESC, m.said_at DESC, m.id DESC LIMIT %s",
        [*(word for _weight, _df, word in weighted), *scope_params, *(w for group in groups for w in group), limit],
    )
    return cursor.fetchall()


def level_score(weights: Sequence[float], held: Iterable[int]) -> float:
    """The score of a message holding the words at positions ``held`` (0-based, in the order of
    ``weights``): the sum of their IDF, added in that order and rounded as the SQL score is."""
    chosen = set(held)
    return round(sum(weight for i, weight in enumerate(weights) if i in chosen), 9)


def score_levels(weights: Sequence[float]) -> list[float]:
    """Every score a message can have (each non-empty set of the words), highest first; sets
    with the same sum share one level."""
    return sorted({level_score(weights, [i for i in range(len(weights)) if mask >> i & 1])
                   for mask in range(1, 1 << len(weights))}, reverse=True)


def groups_above(weights: Sequence[float], score: float) -> list[list[int]]:
    """The fewest word sets such that a message scores above ``score`` exactly when it holds
    every word of one of them (the minimal sets: holding more words only adds)."""
    above = [
        frozenset(i for i in range(len(weights)) if mask >> i & 1) for mask in range(1, 1 << len(weights))
        if level_score(weights, [i for i in range(len(weights)) if mask >> i & 1]) > score
    ]
    minimal = [group for group in above if not any(other < group for other in above)]
    return [sorted(group) for group in sorted(minimal, key=lambda g: (len(g), sorted(g)))]


def latest_size(total: int, frequencies: Sequence[int], *, limit: int,
                bounds: LevelBounds = LEVEL_BOUNDS) -> int | None:
    """How many of the latest messages to read so that they hold about ``WINDOW_SLACK`` x
    ``limit`` messages with any of the words (the words taken as independent), within
    ``LATEST_MIN_ROWS``..``LATEST_MAX_ROWS``; None when that many would not do (rare words) or
    would be half of all messages or more."""
    if total <= 0 or not frequencies:
        return None
    share = 1.0 - math.prod(1.0 - min(df, total) / total for df in frequencies)
    if share <= 0:
        return None
    size = max(bounds.latest_min_rows, math.ceil(WINDOW_SLACK * limit / share))
    if size > bounds.latest_max_rows or 2 * size >= total:
        return None
    return size


def best_by_levels(
    cursor, scope: str, scope_params: list, weighted: list[tuple[float, int, str]], *, limit: int, total: int,
    conversation_ids: Sequence[int], bounds: LevelBounds = LEVEL_BOUNDS,
) -> list[int] | None:
    """The keyword best by score levels, for common words (module docstring); None when this
    read does not apply or cannot answer alone (the caller then reads through the GIN index).

    Every message outside the latest ones read is older than every one inside, so a level with
    at least as many latest matches as are still wanted is answered by its latest matches. The
    levels above it are read whole through the GIN index (``groups_above``); they hold at least
    their latest matches, so no more is wanted of the answering level than it has. When the
    latest messages say those levels are common (words that go together more often than their
    frequencies tell), more of the latest messages are read once instead: reading them in
    index order is cheaper than visiting thousands of GIN matches."""
    words = [word for _weight, _df, word in weighted]
    weights = [weight for weight, _df, _word in weighted]
    if (len(weighted) > LEVEL_MAX_WORDS or not conversation_ids
            or sum(df for _weight, df, _word in weighted) <= bounds.min_postings):
        return None
    size = latest_size(total, [df for _weight, df, _word in weighted], limit=limit, bounds=bounds)
    for _attempt in range(LATEST_READS):
        if size is None:
            return None
        latest = read_latest(cursor, scope, scope_params, words, list(conversation_ids), size,
                             max_rows=bounds.latest_max_rows)
        if latest is None:
            return None
        rows, read = latest
        by_level: dict[float, list[int]] = {}
        for pk, held in rows:
            by_level.setdefault(level_score(weights, [i - 1 for i in held]), []).append(pk)
        wanted = limit
        for score in score_levels(weights):
            found = by_level.get(score, [])
            if len(found) >= wanted:
                break
            wanted -= len(found)
        else:
            return None  # the latest messages fill no level: the words are rarely held together
        groups = groups_above(weights, score)
        if not groups:
            return found[:limit]
        seen_above = limit - wanted  # latest matches of the levels above
        # Enough of the latest for the levels above to hold WINDOW_SLACK x limit, at the density
        # just seen (``read`` of them for ``seen_above``).
        larger = math.ceil(WINDOW_SLACK * limit * read / seen_above) if seen_above else None
        if larger is not None and larger > read and GIN_MATCH_COST * seen_above * total > larger * read:
            # The levels above hold so many messages in all (as estimated from the latest) that
            # visiting them through the GIN index costs more than reading enough of the latest.
            if larger <= bounds.latest_max_rows and 2 * larger < total:
                size = math.ceil(larger * size / read)  # a start chosen for ``size`` reads ``read``
                continue
        rows = _scored(cursor, scope, scope_params, weighted, [[words[i] for i in g] for g in groups], limit=limit)
        return ([row[0] for row in rows] + found)[:limit]
    return None  # read LATEST_READS times without an answer: through the GIN index


def read_latest(cursor, scope: str, scope_params: list, words: Sequence[str], conversation_ids: list[int],
                size: int, *, max_rows: int = LATEST_MAX_ROWS) -> tuple[list[tuple[int, list[int]]], int] | None:
    """The latest ``size`` or so messages of ``scope`` that hold any of ``words``, latest first,
    each with the 1-based positions of the words it holds, and how many messages were read — read
    in index order per conversation
    (``message_conv_said_id_idx``), never through the GIN index, down to a start chosen as in
    ``_holding_every_word`` (every message of ``scope`` not read is older than every one read).
    None when there is no such start (short conversations), no match, or a conversation would
    give more than ``max_rows`` messages (read through the GIN index instead)."""
    per_conversation = math.ceil(2 * size / len(conversation_ids))
    tsqueries = [f"plainto_tsquery('{SEARCH_CONFIG}'::regconfig, %s)" for _word in words]
    cursor.execute(
        f"WITH {LATEST_START}, "
        # ORDER BY ... LIMIT per conversation: the planner walks the index backwards down to the start.
        "latest AS MATERIALIZED (SELECT m.id, m.conversation_id, m.said_at, "
        f"ARRAY[{', '.join(f'm.search_vector @@ {q}' for q in tsqueries)}] AS held "
        "FROM unnest(%s::bigint[]) AS c(id) CROSS JOIN LATERAL ("
        f"SELECT m.id, m.conversation_id, m.said_at, m.search_vector FROM memory_message m WHERE m.conversation_id = c.id "
        f"AND {scope} AND (m.said_at, m.id) >= ((SELECT said_at FROM start), (SELECT id FROM start)) "
        "ORDER BY m.said_at DESC, m.id DESC LIMIT %s) m) "
        "SELECT l.id, l.held, (SELECT max(n) FROM (SELECT count(*) AS n FROM latest GROUP BY conversation_id) x), "
        "(SELECT count(*) FROM latest) "
        "FROM latest l WHERE true = ANY(l.held) ORDER BY l.said_at DESC, l.id DESC",
        [*latest_start_params(conversation_ids, per_conversation), *words,
         conversation_ids, *scope_params, max_rows],
    )
    rows = cursor.fetchall()
    if not rows or rows[0][2] >= max_rows:
        return None
    return [(pk, [i for i, holds in enumerate(held, start=1) if holds]) for pk, held, _widest, _read in rows], rows[0][3]
