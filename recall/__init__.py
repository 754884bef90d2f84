"""Layered, explainable retrieval (docs/read-path.md): the public read API of memory.

    from recall import search_memory, register_strategy, build_system_message

Other apps register strategies (``register_strategy("layered_nav", fn)``) from their
``AppConfig.ready``; recall never imports them. This module is recall's whole public face:
code outside ``recall`` imports from here, never from ``recall.<module>``
(tests/site/test_import_graph.py). Besides the search itself it offers the pieces a strategy
built elsewhere (navigation's ``layered_nav``) and the pages showing results need: the fusion
and scoring steps, the raw-message candidates, the query words and identifiers, and the
payloads of recalled hits.
"""
from recall import strategies as _builtin_strategies  # noqa: F401  (registers semantic, layered)
from recall.fusion import (
    DENSE,
    KEYWORD,
    NOTES,
    Entry,
    RawFloor,
    dense_ranking,
    fuse,
    fusion_reason,
    keyword_ranking,
    select,
)
from recall.identifiers import holds_identifier, identifiers_in
from recall.injection import build_system_message, estimate_tokens
from recall.keywords import query_tokens
from recall.messages import message_candidates
from recall.payloads import (
    contradictions_payload, hit_source_url, message_hit_payload, message_url, note_page_url, said_payload, source_url,
)
from recall.plan import MESSAGES, RetrievalPlan, make_plan
from recall.registry import (
    StrategyFn,
    get_strategy,
    register_strategy,
    registered_strategies,
    unregister_strategy,
)
from recall.scoring import ScoreBreakdown, keyword_score, recency_score, score_message
from recall.events import message_of_event, moment_first
from recall.search import raw_turn_search, search_memory
from recall.strategies import MESSAGE_LIMIT, message_reasons
from recall.types import (
    MAX_K,
    MAX_QUERY_CHARS,
    MESSAGE,
    NOTE,
    Hit,
    InvalidSearch,
    MessageMatch,
    NotFound,
    SearchError,
    SearchRequest,
    SearchResult,
    UnknownStrategy,
)

__all__ = [
    # documents (docs/documents.md)
    # searching
    "MAX_K",
    "MAX_QUERY_CHARS",
    "Hit",
    "InvalidSearch",
    "MessageMatch",
    "NotFound",
    "RetrievalPlan",
    "SearchError",
    "SearchRequest",
    "SearchResult",
    "UnknownStrategy",
    "make_plan",
    "message_of_event",
    "moment_first",
    "raw_turn_search",
    "search_memory",
    # strategies registered from other apps
    "StrategyFn",
    "get_strategy",
    "register_strategy",
    "registered_strategies",
    "unregister_strategy",
    # building blocks of a strategy (navigation's layered_nav)
    "DENSE",
    "KEYWORD",
    "MESSAGE",
    "MESSAGES",
    "MESSAGE_LIMIT",
    "NOTE",
    "NOTES",
    "Entry",
    "RawFloor",
    "ScoreBreakdown",
    "dense_ranking",
    "fuse",
    "fusion_reason",
    "keyword_ranking",
    "keyword_score",
    "message_candidates",
    "message_reasons",
    "recency_score",
    "score_message",
    "select",
    # query words and identifiers (the My memory page's filter)
    "holds_identifier",
    "identifiers_in",
    "query_tokens",
    # what a recalled hit looks like to a client, and in the prompt
    "build_system_message",
    "contradictions_payload",
    "hit_source_url",
    "message_url",
    "note_page_url",
    "source_url",
    "estimate_tokens",
    "message_hit_payload",
    "said_payload",
]
