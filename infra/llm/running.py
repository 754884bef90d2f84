"""Running the LLM client's work outside the caller's event loop: a coroutine to its end from
sync code (``_run_coroutine``, what ``complete_json`` collects its stream with), and a speed
store's call in a pool thread that leaves no database connection behind (``_in_pool_thread``,
for async callers)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine
from typing import Any


def _run_coroutine(coroutine: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coroutine`` to the end from sync code: on a new event loop in this thread, or —
    when this thread already runs one — in a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="llm-request") as pool:
        return pool.submit(asyncio.run, coroutine).result()


def _in_pool_thread(function: Callable[..., Any], *args: Any) -> Any:
    """Run ``function`` (a speed store call) in a pool thread and close that thread's database
    connections afterwards, so async callers leave no connection behind."""
    try:
        return function(*args)
    finally:
        try:
            from django.db import connections

            connections.close_all()
        except Exception:  # noqa: BLE001 - no Django, or nothing to close
            pass
