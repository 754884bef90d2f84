"""``search_memory``: the one entry point other apps use to recall memories (a read)."""
from __future__ import annotations

import re
import time
from dataclasses import replace
from datetime import datetime
from typing import Any, Iterable

from django.utils.translation import gettext

from infra import metrics
from infra.embeddings import embed_query_in_background
from memory.models import Conversation, MemoryScope
from recall.alongside import run_alongside
from recall.as_of import as_of_search
from legaltext.acts import tells
from recall.anchors import question_anchors, unheld_anchors
from recall.reach import reach_of
from documents.search import DocumentHit, search_documents
from recall.fusion import keep_floor_hits
from recall.identifiers import exact_first
from recall.newer_first import newer_first
from recall.plan import make_plan
from recall.query_text import CONTEXT_VECTOR_WEIGHT, query_texts
from recall.registry import get_strategy
from recall.strategies import raw_turns
from recall.types import (
    MAX_K,
    MAX_QUERY_CHARS,
    InvalidSearch,
    NotFound,
    SearchRequest,
    SearchResult,
)

MAX_DB_ID = 2**63 - 1
#: At most this many document passages per search (fewer when ``k`` is smaller). A passage is a
#: piece of a page, many times a note's length: a handful is what a reader (and a prompt) can
#: take beside the notes, and the best few already name the pages to open in the viewer.
MAX_PASSAGES = 5
_NOT_IN_ANCHORS = re.compile(r"[\s,，·]")


def _check_id(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value <= MAX_DB_ID:
        raise InvalidSearch(name, gettext("%(name)s must be a positive whole-number id") % {"name": name})
    return value


def _check_scopes(scopes: Iterable[str] | None) -> tuple[str, ...] | None:
    if scopes is None:
        return None
    scopes = tuple(scopes)
    if not scopes:
        raise InvalidSearch("scopes", gettext("give at least one scope, or none to search every layer"))
    unknown = [scope for scope in scopes if scope not in MemoryScope.values]
    if unknown:
        raise InvalidSearch(
            "scopes", gettext("unknown scope %(scope)r; the scopes are: %(scopes)s") % {
                "scope": str(unknown[0])[:50], "scopes": ", ".join(MemoryScope.values)}
        )
    return tuple(dict.fromkeys(scopes))


def search_memory(
    user,
    query: str,
    *,
    k: int = 10,
    strategy: str = "layered",
    matter_id: int | None = None,
    scopes: Iterable[str] | None = None,
    conversation: Conversation | int | None = None,
    context: str = "",
    exclude_message_ids: Iterable[int] = (),
    as_of: datetime | None = None,
    valid_at: datetime | None = None,
) -> SearchResult:
    """Recall the ``k`` memories ``user`` may see that best answer ``query`` — or, with
    ``as_of`` / ``valid_at``, the notes current in memory then / whose fact held then
    (``recall.as_of``).

    Raises ``InvalidSearch`` (bad input, incl. ``UnknownStrategy``) and ``NotFound`` (a matter or
    conversation the user may not see — another firm's, or behind the ethical wall). Everything
    read goes through ``visible_to(user)``; nothing is written.
    """
    started = time.perf_counter()
    strategy_fn = get_strategy(strategy)
    request = prepare_request(user, query, k=k, strategy=strategy, matter_id=matter_id, scopes=scopes,
                              conversation=conversation, context=context, exclude_message_ids=exclude_message_ids)
    checked = time.perf_counter()
    if as_of is not None or valid_at is not None:
        result = as_of_search(request, as_of=as_of, valid_at=valid_at)
        result.timings = {"plan": round((checked - started) * 1000, 2), "embed_wait": request.embed_wait_ms,
                          **result.timings, "total": round((time.perf_counter() - started) * 1000, 2)}
        metrics.SEARCH_SECONDS.labels("as_of").observe(result.timings["total"] / 1000)
        return result
    query, plan, reach, matter_id = request.query, request.plan, request.reach, request.matter_id
    anchored = time.perf_counter()
    # "Nothing on 王磊" only about a name the message asks for: "中介叫王磊。" tells, it does not ask.
    anchors = [] if tells(query) else question_anchors(query)
    nothing_on = unheld_anchors(user, reach, anchors, request.exclude_message_ids)
    anchors_ms = round((time.perf_counter() - anchored) * 1000, 2)
    # The document passages need only the query vector: read on a connection of their own while
    # the strategy reads, so a search does not wait for them after it (docs/performance.md);
    # not at all where the matters searched hold none.
    if reach.may_hold_passages(matter_id):
        passages = run_alongside(lambda: document_passages(request, nothing_on))
    else:
        passages = _no_passages
    if nothing_on:
        result = SearchResult(strategy=strategy, query=query, plan=plan, hits=[], nothing_on=nothing_on)
    else:
        result = strategy_fn(request)
        # Whatever the strategy: what holds an exact identifier of the question (an ID number, a
        # case number) first; then of two contradicting notes, the newer statement just above the older
        # (the older above the newer when the question asks for the first version given).
        ordered = time.perf_counter()
        exact = keep_floor_hits(exact_first(request, result.hits), result.hits, result.raw_floor, k)
        result.hits = newer_first(user, renumbered(exact), reach, older_first=plan.first_version)
        result.timings["order"] = round((time.perf_counter() - ordered) * 1000, 2)
    read_documents = time.perf_counter()
    result.passages = passages()
    result.timings["documents"] = round((time.perf_counter() - read_documents) * 1000, 2)  # what it added
    request.query_vector  # noqa: B018 - a strategy that never needed the vector: its encode time still counts
    embedding = request.embedding
    result.timings = {
        # "plan": validation, access and plan; "embed": the encoder's own time, of which only
        # "embed_wait" was spent waiting (the rest ran alongside "plan" and the strategy's
        # reads that need no vector).
        "plan": round((checked - started) * 1000, 2),
        "embed": embedding.encode_ms,
        "embed_wait": request.embed_wait_ms,
        "anchors": anchors_ms,  # names and numbers held by nothing visible (recall.anchors)
        **result.timings,
        "total": round((time.perf_counter() - started) * 1000, 2),
    }
    metrics.SEARCH_SECONDS.labels(strategy).observe(result.timings["total"] / 1000)
    if not embedding.remembered:  # a remembered vector was not encoded: no encoder time to count
        metrics.QUERY_ENCODE_SECONDS.observe(embedding.encode_ms / 1000)
    for stage, ms in result.timings.items():  # every layer is read in one statement: stages, not layers
        if stage != "total" and isinstance(ms, (int, float)):
            metrics.SEARCH_STAGE_SECONDS.labels(strategy, stage).observe(ms / 1000)
    for hit in result.hits:
        metrics.RECALLED.labels(hit.layer).inc()
    return result


def prepare_request(user, query: str, *, k: int, strategy: str, matter_id: int | None,
                    scopes: Iterable[str] | None, conversation: Conversation | int | None, context: str,
                    exclude_message_ids: Iterable[int]) -> SearchRequest:
    """A checked search: query, k, scopes, matter and conversation validated against what
    ``user`` may see, and the query's encoding started. Raises ``InvalidSearch``, ``NotFound``."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidSearch("query", gettext("the query is empty"))
    query = query.strip()
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidSearch("query", gettext("the query is longer than %(n)d characters") % {"n": MAX_QUERY_CHARS})
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise InvalidSearch("k", gettext("k must be a whole number from 1 to %(max)d") % {"max": MAX_K})
    scopes = _check_scopes(scopes)
    if matter_id is not None:
        matter_id = _check_id("matter", matter_id)
    conversation_id = None
    if conversation is not None:
        conversation_id = (
            conversation.pk if isinstance(conversation, Conversation) else _check_id("conversation", conversation)
        )
    # The input is well-formed: encode the query while the database answers who may see what.
    texts = query_texts(query, context if isinstance(context, str) else "")
    pending = embed_query_in_background(texts.question, texts.context, CONTEXT_VECTOR_WEIGHT)
    reach = reach_of(user)
    if matter_id is not None and matter_id not in reach.matter_ids:
        raise NotFound("no such matter")
    conversation_obj: Conversation | None = None
    if conversation_id is not None:
        conversation_obj = Conversation.objects.visible_to(user).filter(pk=conversation_id).first()
        if conversation_obj is None:
            raise NotFound("no such conversation")
        if matter_id is None:
            matter_id = conversation_obj.matter_id
        elif conversation_obj.matter_id not in (None, matter_id):
            raise InvalidSearch("conversation", gettext("the conversation belongs to another matter"))
    plan = make_plan(
        query,
        matter_id=matter_id,
        conversation_id=conversation_obj.pk if conversation_obj else None,
        scopes=scopes,
    )
    return SearchRequest(
        user=user,
        query=query,
        k=k,
        strategy=strategy,
        plan=plan,
        matter_id=matter_id,
        scopes=scopes,
        conversation=conversation_obj,
        pending_vector=pending,
        reach=reach,
        exclude_message_ids=tuple(int(pk) for pk in exclude_message_ids),
        context=context[:MAX_QUERY_CHARS] if isinstance(context, str) else "",
    )


def raw_turn_search(user, query: str, *, k: int = 10, matter_id: int | None = None, context: str = "",
                    conversation: Conversation | int | None = None,
                    exclude_message_ids: Iterable[int] = ()) -> list[int]:
    """The raw-turn search: the ids of the messages ``user`` may see, best first, by reciprocal-rank
    fusion of their dense and BM25 ranks for ``query`` — the same candidates, words and vector
    the layered search reads. Its first ``RAW_FLOOR_N`` are the floor every layered result covers
    (docs/read-path.md, "The raw floor"). Same checks and errors as ``search_memory``."""
    request = prepare_request(user, query, k=k, strategy="layered", matter_id=matter_id, scopes=None,
                              conversation=conversation, context=context,
                              exclude_message_ids=exclude_message_ids)
    return list(raw_turns(request).ranked)


def renumbered(hits: list) -> list:
    """``hits`` with their ranks numbered anew, best first."""
    return [replace(hit, rank=rank) for rank, hit in enumerate(hits, start=1)]


def _no_passages() -> list[DocumentHit]:
    return []


def document_passages(request: SearchRequest, nothing_on: list[str]) -> list[DocumentHit]:
    """The document passages for a search, whatever its strategy: the search's matter (every
    matter the user may see without one), at most ``min(k, MAX_PASSAGES)``, ranked by
    ``search_documents`` with the search's own query vector.

    None when the search is limited to layers without the case layer (documents are a matter's
    material, as case facts are). When the question names something no note or message holds
    (``nothing_on``), only passages naming all of it are kept: a passage about someone else is
    no answer, one quoting the very name or number is."""
    if request.scopes is not None and MemoryScope.CASE not in request.scopes:
        return []
    limit = min(request.k, MAX_PASSAGES)
    passages = search_documents(
        request.user, request.query, matter_id=request.matter_id, limit=limit * 4 if nothing_on else limit,
        vector=request.query_vector,
        matter_ids=request.reach.matter_ids if request.reach is not None else None,
    )
    if nothing_on:
        anchors = [_NOT_IN_ANCHORS.sub("", anchor).casefold() for anchor in nothing_on]
        passages = [p for p in passages if all(a in _NOT_IN_ANCHORS.sub("", p.text).casefold() for a in anchors)]
    return passages[:limit]
