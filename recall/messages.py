"""Raw-message candidates: every saved turn is a source of every layered search.

The messages a search may read are those of ``Conversation.objects.visible_to(user)`` (the
user's own conversations, only while their matter is still assigned), narrowed to the current
matter's conversations and the matter-less ones when there is a current matter.

How many there are comes first, from the per-conversation term counts (``ConversationTerm``,
kept by triggers): one index read. Up to ``settings.EXACT_MESSAGE_MAX_ROWS`` of them, ONE statement makes
one pass over them: how many hold each query word (document frequencies, for BM25 IDF weights —
raw chat lines need them: a name or a common verb appears in hundreds of lines), the exact nearest
by cosine distance, and the highest IDF-weighted keyword matches (stored ``search_vector``), each
row with the indexes of the query words it holds. Above that bound nothing reads every message:
the frequencies are those counts, the keyword best comes through the GIN index and the nearest
from an HNSW walk (recall/message_scale.py) — the same candidates.

A message not yet embedded (the indexing job has not run) is still found by its keywords.
"""
from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Iterable, Sequence

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Q

from memory.corrections import says_it_corrects
from memory.models import Conversation, Message, Note
from memory.models.conversations import SEARCH_CONFIG
from infra.embeddings.literals import vector_literal
from recall.instances import fast_timestamps, instance_from_row
from recall.keywords import term
from recall.message_scale import keyword_best, read_frequencies
from recall.plan import RetrievalPlan
from recall.reach import Reach

MAX_QUERY_WORDS = 32
MAX_FUNCTION_WORDS = 8
MESSAGE_FIELDS = ("id", "conversation_id", "firm_id", "role", "speaker", "content", "status", "said_at", "search_text")


@dataclass
class MessageCandidate:
    message: Message
    distance: float | None = None
    matched_words: list[str] = field(default_factory=list)
    keyword: float = 0.0  # IDF-weighted share of the query words the message holds
    matched_idf: list[float] = field(default_factory=list)  # BM25 IDF of each matched word
    # The question's function words the message holds, with their IDF: they add to its BM25
    # only (as in a plain index), never to which messages are read or to the keyword share.
    function_words: list[str] = field(default_factory=list)
    function_idf: list[float] = field(default_factory=list)
    bm25: float = 0.0  # Okapi BM25 of the message for the query (see ``score_bm25``)
    via_vector: bool = False
    via_keyword: bool = False
    partner: Message | None = None  # the other message of its turn (question <-> reply), if any

    @property
    def turn_ids(self) -> tuple[int, ...]:
        """The ids of the turn this message belongs to, the user's question first: one fusion slot."""
        if self.partner is None:
            return (self.message.pk,)
        pair = sorted((self.message, self.partner), key=lambda m: (m.role != Message.Role.USER, m.said_at, m.pk))
        return tuple(m.pk for m in pair)


def searchable_conversation_ids(user, plan: RetrievalPlan) -> list[int]:
    """The conversations whose messages this search may read (always through ``visible_to``)."""
    if not user.is_authenticated:
        return []
    sql, params = _conversations_statement(user.pk, plan.matter_id)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [row[0] for row in cursor.fetchall()]


@functools.lru_cache(maxsize=4096)
def _conversations_statement(user_id: int, matter_id: int | None) -> tuple[str, tuple]:
    """``searchable_conversation_ids``' statement, compiled once per process for a user and
    current matter (compiling costs more than running it; the rule runs in the database)."""
    conversations = Conversation.objects.visible_to(get_user_model()(pk=user_id))
    if matter_id is not None:
        conversations = conversations.filter(Q(matter_id=matter_id) | Q(matter__isnull=True))
    return conversations.order_by().values_list("pk", flat=True).query.sql_with_params()


def forgotten_source_ids(user, reach: Reach | None = None) -> list[int]:
    """The messages of notes the user may see that were forgotten ("forget this memory",
    docs/my-memory-and-admin.md): what was forgotten is not recalled from the raw turns either.
    The conversation itself still shows them; erasure is what removes them. With the user's
    ``reach`` (read once per search) the rule is compiled with its ids as literals: an index
    read instead of a join over the firm's notes."""
    if not user.is_authenticated:
        return []
    sql, params = _forgotten_statement(user.pk, reach)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return sorted({message_id for (ids,) in cursor.fetchall() for message_id in ids or ()})


@functools.lru_cache(maxsize=4096)
def _forgotten_statement(user_id: int, reach: Reach | None) -> tuple[str, tuple]:
    """``forgotten_source_ids``' statement, compiled once per process for a user and the reach
    read by the search (a changed membership or assignment is another key)."""
    user = get_user_model()(pk=user_id)
    notes = Note.objects.visible_to(user, **reach.literals()) if reach is not None else Note.objects.visible_to(user)
    rows = notes.filter(status=Note.Status.FORGOTTEN).order_by().values_list("source_message_ids", flat=True)
    return rows.query.sql_with_params()


@dataclass
class MessageRead:
    """What the message stage knows before the query vector: whom to read, the words' document
    frequencies and, above the exact bound, the keyword best (``prepare_message_read``)."""

    conversation_ids: list[int]
    words: list[str]  # the query words, then the function words (``selecting`` of them select)
    excluded: list[int]
    scope: str
    scope_params: list
    exact: bool
    idf: list[float] = field(default_factory=list)
    keyword_ids: list[int] = field(default_factory=list)
    selecting: int | None = None  # how many of ``words`` choose the keyword best (the rest only
    # score); None: all of them

    def __post_init__(self) -> None:
        if self.selecting is None:
            self.selecting = len(self.words)


def prepare_message_read(user, plan: RetrievalPlan, tokens: Sequence[str], *, limit: int,
                         exclude_ids: Iterable[int] = (), reach: Reach | None = None,
                         function_words: Sequence[str] = ()) -> MessageRead | None:
    """The reads that need no query vector (they run while the encoder works): the searchable
    conversations, the forgotten messages, the term counts and, for very many messages, the
    keyword best. ``function_words`` ("我", "给") are counted and scored like the query words
    but choose no message. None when the user has no searchable conversation."""
    conversation_ids = searchable_conversation_ids(user, plan)
    if not conversation_ids:
        return None
    words = list(tokens[:MAX_QUERY_WORDS])
    selecting = len(words)
    words += [word for word in dict.fromkeys(function_words) if word not in words][:MAX_FUNCTION_WORDS]
    excluded = [*exclude_ids, *forgotten_source_ids(user, reach)] or [0]
    # A reply that only repeats recalled memory is never recalled itself (the memories are).
    scope = "m.conversation_id = ANY(%s) AND m.status = %s AND NOT m.repeats_memory AND NOT (m.id = ANY(%s))"
    scope_params = [conversation_ids, Message.Status.COMPLETE, excluded]
    with connection.cursor() as cursor:
        counted = read_frequencies(cursor, conversation_ids, excluded, scope, scope_params, words)
        read = MessageRead(conversation_ids, words, excluded, scope, scope_params,
                           exact=counted.total <= settings.EXACT_MESSAGE_MAX_ROWS, selecting=selecting)
        if not read.exact:
            read.idf = counted.idf()
            read.keyword_ids = keyword_best(cursor, scope, scope_params, words[:selecting], read.idf[:selecting],
                                            counted.per_word[:selecting], limit=limit, total=counted.total,
                                            conversation_ids=conversation_ids)
    return read


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
    read = prepare_message_read(user, plan, tokens, limit=limit, exclude_ids=exclude_ids)
    return read_message_candidates(read, vector, limit=limit, ef_search=ef_search)


def read_message_candidates(read: MessageRead | None, vector: np.ndarray, *, limit: int,
                            ef_search: int = 200) -> list[MessageCandidate]:
    """The candidates of a prepared read, now that the query vector is known (one statement)."""
    if read is None:
        return []
    words, excluded, scope, scope_params = read.words, read.excluded, read.scope, read.scope_params
    partners: dict[int, Message] | None = None
    with connection.cursor() as cursor:
        fast_timestamps(cursor)
        if read.exact:
            rows, idf = _read_exact(cursor, scope, scope_params, vector, words, limit=limit, selecting=read.selecting)
        else:
            idf = read.idf
            rows = _read_walk(cursor, read, vector, limit=limit, ef_search=ef_search)
            partners = _partners_in_rows(rows)  # the walk read them with the candidates
    if not rows:
        return []
    selecting = read.selecting
    total_idf = sum(idf[:selecting]) or 1.0
    found: list[MessageCandidate] = []
    alias = connection.alias
    width = len(MESSAGE_FIELDS)
    for row in rows:
        message = instance_from_row(Message, alias, MESSAGE_FIELDS, row[:width])
        distance, matched, src = row[width], row[width + 1], row[width + 2]
        indexes = [i - 1 for i in (matched or []) if i <= selecting]
        functions = [i - 1 for i in (matched or []) if i > selecting]
        found.append(MessageCandidate(
            message=message,
            distance=None if distance is None else float(distance),
            matched_words=[words[i] for i in indexes],
            keyword=round(sum(idf[i] for i in indexes) / total_idf, 4),
            matched_idf=[idf[i] for i in indexes],
            function_words=[words[i] for i in functions],
            function_idf=[idf[i] for i in functions],
            via_vector=0 in src,
            via_keyword=1 in src,
        ))
    score_bm25(found)
    if partners is None:
        attach_turn_partners(found, exclude_ids=excluded)
    else:
        for c in found:
            c.partner = partners.get(c.message.pk)
    return found


def word_idf(words: Iterable[str], found: list[MessageCandidate]) -> dict[str, float]:
    """Each query word's BM25 IDF over the messages searched, as the candidates report it; a
    word no candidate holds gets the highest IDF seen (it is rarer than any of them). Empty when
    no message was read (the note keyword share is then unweighted)."""
    idf = {word: value for c in found for word, value in zip(c.matched_words, c.matched_idf)}
    if not idf:
        return {}
    rarest = max(idf.values())
    return {word: idf.get(word, rarest) for word in words}


def attach_turn_partners(found: list[MessageCandidate], *, exclude_ids: Iterable[int] = ()) -> None:
    """Set each candidate's turn partner in ONE statement (``partner_join``)."""
    if not found:
        return
    join, join_params = partner_join("c", exclude_ids)
    with connection.cursor() as cursor:
        fast_timestamps(cursor)
        cursor.execute(
            f"SELECT c.id, {partner_columns()} FROM memory_message c {join} WHERE c.id = ANY(%s)",
            [*join_params, [c.message.pk for c in found]],
        )
        rows = cursor.fetchall()
    alias = connection.alias
    partners = {row[0]: instance_from_row(Message, alias, MESSAGE_FIELDS, row[1:]) for row in rows if row[1] is not None}
    for c in found:
        c.partner = partners.get(c.message.pk)


def partner_join(alias: str, exclude_ids: Iterable[int] = ()) -> tuple[str, list]:
    """A LEFT JOIN giving the message ``alias`` its turn partner as ``p``: a user message's
    partner is the reply right after it, a reply's is the user message right before it (same
    conversation, complete messages, by ``said_at`` then id; one index probe of
    ``message_conv_said_id_idx``). The partner is in the message's own conversation, so it is
    exactly as visible as the message. An excluded message (the chat's current question) is
    never a partner: its reply then stands alone (it is not paired with an earlier question).
    Nor is a reply that only repeats recalled memory (``Message.repeats_memory``)."""
    columns = ", ".join([*(f"n.{name}" for name in MESSAGE_FIELDS), "n.repeats_memory AS partner_repeats"])
    user, assistant, complete = Message.Role.USER, Message.Role.ASSISTANT, Message.Status.COMPLETE
    neighbour = (
        f"(SELECT {columns} FROM memory_message n WHERE n.conversation_id = {alias}.conversation_id "
        f"AND n.status = %s AND {alias}.role = %s AND (n.said_at, n.id) {{direction}} ({alias}.said_at, {alias}.id) "
        "ORDER BY n.said_at {order}, n.id {order} LIMIT 1)"
    )
    join = (
        f"LEFT JOIN LATERAL ({neighbour.format(direction='>', order='ASC')} UNION ALL "
        f"{neighbour.format(direction='<', order='DESC')}) p "
        f"ON p.role = CASE WHEN {alias}.role = %s THEN %s ELSE %s END AND NOT (p.id = ANY(%s)) AND NOT p.partner_repeats"
    )
    return join, [complete, user, complete, assistant, user, assistant, user, list(exclude_ids) or [0]]


def partner_columns() -> str:
    """The partner's columns in a ``partner_join`` (NULL when it has none)."""
    return ", ".join(f"p.{name}" for name in MESSAGE_FIELDS)


def _partners_in_rows(rows: list[tuple]) -> dict[int, Message]:
    """The partners a walk row carries after its own columns (``_read_walk``)."""
    alias = connection.alias
    width = len(MESSAGE_FIELDS)
    partners = {}
    for row in rows:
        partner = row[width + 3:width + 3 + width]
        if partner[0] is not None:
            partners[row[0]] = instance_from_row(Message, alias, MESSAGE_FIELDS, partner)
    return partners


BM25_K1 = 1.2  # term-frequency saturation (the usual Okapi values)
BM25_B = 0.75  # document-length normalisation


def score_bm25(found: list[MessageCandidate], discount: dict[str, float] | None = None) -> None:
    """Set each candidate's Okapi BM25: the IDF of every matched query word (times its topic
    ``discount``, ``recall.topic``, when given), weighted by how often
    the message says it and discounted for long messages (average length: over the candidates).
    The keyword list of the fusion ranks by it, so a short line that names the asked thing beats
    a long one that mentions it in passing — as a plain BM25 index over the raw turns would."""
    lengths = {id(c): len(c.message.search_text.split()) for c in found}
    average = (sum(lengths.values()) / len(found)) if found else 1.0
    for c in found:
        if not c.matched_words and not c.function_words:
            continue
        counts = Counter(term(token) for token in c.message.search_text.split())
        norm = BM25_K1 * (1 - BM25_B + BM25_B * lengths[id(c)] / (average or 1.0))
        total = 0.0
        for word, weight in zip([*c.matched_words, *c.function_words], [*c.matched_idf, *c.function_idf]):
            frequency = max(1, counts.get(term(word), 0))  # matched by PostgreSQL's stemmer at least once
            total += weight * (discount or {}).get(word, 1.0) * frequency * (BM25_K1 + 1) / (frequency + norm)
        c.bm25 = round(total, 4)


def _read_exact(cursor, scope: str, scope_params: list, vector: np.ndarray, words: list[str],
                *, limit: int, selecting: int) -> tuple[list[tuple], list[float]]:
    """ONE pass over the user's messages (a materialised pool with each one's distance and terms):
    the document frequencies, the exact nearest, the IDF-weighted keyword best (by the first
    ``selecting`` words), and their columns."""
    columns = ", ".join(f"m.{name}" for name in MESSAGE_FIELDS)
    sql = (
        "WITH query_vector AS MATERIALIZED (SELECT %s::vector AS v), "
        "query_words AS MATERIALIZED (SELECT t.i, plainto_tsquery(%s::regconfig, t.word) AS q "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS t(word, i)), "
        "pool AS MATERIALIZED (SELECT m.id, m.said_at, m.search_vector AS terms, "
        f"(m.embedding <=> (SELECT v FROM query_vector)) AS distance FROM memory_message m WHERE {scope}), "
        "total AS MATERIALIZED (SELECT count(*) AS n FROM pool), "
        "frequencies AS MATERIALIZED (SELECT w.i, w.q, (SELECT count(*) FROM pool WHERE pool.terms @@ w.q) AS df "
        "FROM query_words w WHERE numnode(w.q) > 0), "
        "weights AS MATERIALIZED (SELECT f.i, f.q, ln(1 + ((SELECT n FROM total) - f.df + 0.5) / (f.df + 0.5)) AS idf "
        "FROM frequencies f WHERE f.df > 0), "
        "nearest AS (SELECT id, 0 AS src FROM pool WHERE distance IS NOT NULL ORDER BY distance LIMIT %s), "
        "keyword AS (SELECT pool.id, 1 AS src FROM pool JOIN weights w ON w.i <= %s AND pool.terms @@ w.q "
        "GROUP BY pool.id, pool.said_at ORDER BY round(sum(w.idf)::numeric, 9) DESC, pool.said_at DESC, pool.id DESC "
        "LIMIT %s), "
        "found AS (SELECT u.id, array_agg(DISTINCT u.src) AS src FROM "
        "(SELECT * FROM nearest UNION ALL SELECT * FROM keyword) u GROUP BY u.id) "
        f"SELECT {columns}, p.distance, ARRAY(SELECT w.i FROM weights w WHERE p.terms @@ w.q ORDER BY w.i), "
        "found.src, ARRAY(SELECT w.i FROM weights w ORDER BY w.i), ARRAY(SELECT w.idf FROM weights w ORDER BY w.i) "
        "FROM found JOIN pool p ON p.id = found.id JOIN memory_message m ON m.id = found.id"
    )
    cursor.execute(sql, [vector_literal(vector), SEARCH_CONFIG, words, *scope_params, limit, selecting, limit])
    rows = cursor.fetchall()
    idf = [0.0] * len(words)
    if rows:
        for index, weight in zip(rows[0][-2], rows[0][-1]):
            idf[index - 1] = float(weight)
    return [row[:-2] for row in rows], idf


def _read_walk(cursor, read: MessageRead, vector: np.ndarray, *, limit: int, ef_search: int) -> list[tuple]:
    """Very many messages (recall/message_scale.py): ONE statement for the HNSW walk
    (iterative scan) and the columns of every candidate, the keyword best already known. The
    HNSW settings go in the same query string (one round trip, as ``hnsw._fetch_with_local_hnsw``),
    each candidate's turn partner after its columns (``partner_join``)."""
    columns = ", ".join(f"m.{name}" for name in MESSAGE_FIELDS)
    distance = "(m.embedding <=> (SELECT v FROM query_vector))"
    join, join_params = partner_join("m", read.excluded)
    cursor.execute(
        "SELECT set_config('hnsw.ef_search', %s, true), set_config('hnsw.iterative_scan', 'relaxed_order', true); "
        "WITH query_vector AS MATERIALIZED (SELECT %s::vector AS v), "
        "query_words AS MATERIALIZED (SELECT t.i, plainto_tsquery(%s::regconfig, t.word) AS q "
        "FROM unnest(%s::text[]) WITH ORDINALITY AS t(word, i)), "
        f"nearest AS (SELECT m.id, 0 AS src FROM memory_message m WHERE {read.scope} AND m.embedding IS NOT NULL "
        f"ORDER BY {distance} LIMIT %s), "
        "found AS (SELECT u.id, array_agg(DISTINCT u.src) AS src FROM (SELECT * FROM nearest UNION ALL "
        "SELECT k.id, 1 AS src FROM unnest(%s::bigint[]) AS k(id)) u GROUP BY u.id) "
        f"SELECT {columns}, {distance} AS distance, "
        "ARRAY(SELECT w.i FROM query_words w WHERE numnode(w.q) > 0 AND m.search_vector @@ w.q "
        f"AND w.i = ANY(%s) ORDER BY w.i), found.src, {partner_columns()} "
        f"FROM found JOIN memory_message m ON m.id = found.id {join}",
        [str(max(ef_search, limit)), vector_literal(vector), SEARCH_CONFIG, read.words, *read.scope_params, limit,
         read.keyword_ids, [i + 1 for i, weight in enumerate(read.idf) if weight > 0], *join_params],
    )
    cursor.nextset()
    return cursor.fetchall()


@dataclass(frozen=True)
class Statement:
    """What a message said, for comparing slots: its embedding, when it was said, and whether
    it says it corrects something said before (``memory.corrections``)."""

    vector: np.ndarray
    said_at: datetime
    corrects: bool = False


def statements_of(user, message_ids: Iterable[int], *, corrections: bool = False) -> dict[int, Statement]:
    """The embedded messages among ``message_ids`` that ``user`` may see (a firm-wide note's
    private source messages stay out), by id. Their words are read, to tell whether each says
    it corrects something, only with ``corrections`` (a question for the first version given)."""
    rows = (
        Message.objects.filter(conversation__in=Conversation.objects.visible_to(user), pk__in=list(message_ids))
        .exclude(embedding=None)
        .values_list("pk", "embedding", "said_at", *(("content",) if corrections else ()))
    )
    return {pk: Statement(np.asarray(vector, dtype=np.float32), said_at, bool(content) and says_it_corrects(content[0]))
            for pk, vector, said_at, *content in rows}
