"""Switching the LLM off for one run (``generate_story --offline``): while ``offline_only()``
is active in the current thread or task, ``LLMConfig.from_settings()`` reports no server, so
story generation, turn extraction, consolidation and answers all use the offline engine."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_forced_offline: ContextVar[bool] = ContextVar("legalmem_llm_forced_offline", default=False)


@contextmanager
def offline_only() -> Iterator[None]:
    """No LLM request leaves this process inside the ``with`` block (context-local)."""
    token = _forced_offline.set(True)
    try:
        yield
    finally:
        _forced_offline.reset(token)


def llm_forced_offline() -> bool:
    """True inside ``offline_only()``."""
    return _forced_offline.get()
