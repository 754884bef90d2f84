"""The strategy registry: other apps add strategies (e.g. navigation's ``layered_nav``)
from their ``AppConfig.ready`` without memory importing them."""
from __future__ import annotations

import threading
from typing import Callable

from recall.types import SearchRequest, SearchResult, UnknownStrategy

StrategyFn = Callable[[SearchRequest], SearchResult]

_strategies: dict[str, StrategyFn] = {}
_lock = threading.Lock()


def register_strategy(name: str, fn: StrategyFn, *, replace: bool = False) -> None:
    """Register ``fn`` under ``name``; registering a different function twice needs ``replace=True``."""
    if not name or not name.replace("_", "").isalnum():
        raise ValueError(f"strategy names are letters, digits and underscores: {name!r}")
    with _lock:
        existing = _strategies.get(name)
        if existing is not None and existing is not fn and not replace:
            raise ValueError(f"strategy {name!r} is already registered")
        _strategies[name] = fn


def unregister_strategy(name: str) -> None:
    with _lock:
        _strategies.pop(name, None)


def registered_strategies() -> list[str]:
    with _lock:
        return sorted(_strategies)


def get_strategy(name: str) -> StrategyFn:
    with _lock:
        fn = _strategies.get(name)
    if fn is None:
        raise UnknownStrategy(name, registered_strategies())
    return fn
