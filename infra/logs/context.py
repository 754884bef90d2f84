"""The ids of what is being served right now (request, connection, turn, job), carried in a
context variable so every log line written meanwhile names them — in a view, in a consumer's
turn task, or in a thread ``database_sync_to_async`` started (asgiref copies the context)."""
from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import Any

_ids: ContextVar[dict[str, Any]] = ContextVar("legalmem_log_ids", default={})

# What an incoming X-Request-ID may look like (a UUID, a proxy's or a tracer's id); anything
# else — too long, spaces, quotes, control characters — is replaced by a fresh id.
REQUEST_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")


def bound_ids() -> dict[str, Any]:
    """The ids bound in this context (a copy)."""
    return dict(_ids.get())


def push(**ids: Any) -> Token:
    """Add ``ids`` (None values are left out) until ``pop`` is given the returned token."""
    return _ids.set({**_ids.get(), **{name: value for name, value in ids.items() if value is not None}})


def pop(token: Token) -> None:
    _ids.reset(token)


@contextmanager
def bind(**ids: Any) -> Iterator[None]:
    """Add ``ids`` (None values are left out) to every log line written inside the block."""
    token = push(**ids)
    try:
        yield
    finally:
        pop(token)


def request_id_from(incoming: str | None) -> str:
    """The caller's request id when it is well-formed, else a new one: the id a proxy put on a
    request follows it through our logs, and a forged header cannot inject text into them."""
    if incoming and REQUEST_ID_PATTERN.fullmatch(incoming):
        return incoming
    return uuid.uuid4().hex
