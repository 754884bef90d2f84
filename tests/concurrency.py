"""Call a function from several threads released at the same instant, each with its own
database connection — the way several servers or workers reach one check-then-write at once."""
from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connection


def all_at_once(function: Callable[[], Any], times: int) -> list[Any]:
    """Each call's result, or the exception it raised (in no particular order). Needs committed
    data (``transactional_db``): every thread has its own connection."""
    barrier = threading.Barrier(times)

    def call() -> Any:
        try:
            barrier.wait(timeout=30)
            return function()
        except Exception as exc:  # noqa: BLE001 - returned for the test to look at
            return exc
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=times) as pool:
        return list(pool.map(lambda _: call(), range(times)))
