"""The LLM requests this process is collecting, so a stopping worker closes them at once
(``stop_generations``, called from ``run_worker``'s signal handler) instead of leaving them
generating on the server (docs/llm-servers.md, "A stopping worker closes its request").

One registry per process, kept apart from the client: every client of the process registers
with it, and the worker's signal handler reaches it without a client.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

from .errors import LLMStopped


class _InFlight:
    """The collecting requests of this process, so a stopping worker can close them: a request
    left running would go on generating on the server (llama.cpp serves one at a time) for
    minutes after the worker is gone (docs/llm-servers.md, "Give-ups")."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._tasks: set[tuple[asyncio.AbstractEventLoop, asyncio.Task[Any]]] = set()

    @contextlib.contextmanager
    def held(self) -> Any:
        """Register the running task for as long as its request is collected."""
        if self.stopping.is_set():
            raise LLMStopped("This process is stopping: no new request is sent to the LLM server.")
        entry = (asyncio.get_running_loop(), asyncio.current_task())
        with self._lock:
            self._tasks.add(entry)
        try:
            yield
        finally:
            with self._lock:
                self._tasks.discard(entry)

    def stop(self) -> int:
        """Cancel every registered task (its stream is closed as it unwinds); safe from a
        signal handler and from any thread. Returns how many were in flight."""
        self.stopping.set()
        with self._lock:
            entries = list(self._tasks)
        for loop, task in entries:
            with contextlib.suppress(RuntimeError):  # its loop already closed: nothing to stop
                loop.call_soon_threadsafe(task.cancel)
        return len(entries)


_IN_FLIGHT = _InFlight()


def stop_generations() -> int:
    """Close every LLM request this process is collecting and send no new one: what a worker
    does when it is told to stop, so no generation keeps running on the server after it. The
    callers get :class:`LLMStopped` (the turn job is retried, without counting an attempt)."""
    return _IN_FLIGHT.stop()


__all__ = ["stop_generations"]
