"""Layered, explainable retrieval (docs/read-path.md): the public read API of memory.

    from recall import search_memory, register_strategy, build_system_message

Other apps register strategies (``register_strategy("layered_nav", fn)``) from their
``AppConfig.ready``; memory never imports them.
"""
from recall import strategies as _builtin_strategies  # noqa: F401  (registers semantic, layered)
from recall.injection import build_system_message, estimate_tokens
from recall.plan import RetrievalPlan, make_plan
from recall.registry import (
    StrategyFn,
    get_strategy,
    register_strategy,
    registered_strategies,
    unregister_strategy,
)
from recall.search import search_memory
from recall.types import (
    MAX_K,
    MAX_QUERY_CHARS,
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
    "StrategyFn",
    "UnknownStrategy",
    "build_system_message",
    "estimate_tokens",
    "get_strategy",
    "make_plan",
    "register_strategy",
    "registered_strategies",
    "search_memory",
    "unregister_strategy",
]
