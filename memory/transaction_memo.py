"""Locks and checks taken once per turn transaction of the bulk import (docs/performance.md).

A bulk import routes all the items of a turn in one transaction. Several statements each item
repeats hold until that transaction ends anyway — a context's advisory lock, the HNSW search
settings (``SET LOCAL``), the turn's row lock — or read something that cannot change under
those locks (the owner's membership of the firm). Inside ``memo_scope()``, opened by the bulk
import right inside a turn's transaction, each is taken or read once.

An entry made inside a savepoint counts only while that savepoint is still open: rolling a
savepoint back releases its locks and its ``SET LOCAL`` values, so the next caller takes them
again. Outside a scope nothing is remembered and every caller runs its statement (the per-turn
path, chat, admin).
"""
from __future__ import annotations

from contextlib import contextmanager
from contextvars import ContextVar
from typing import Callable, Hashable, Iterator, TypeVar

from django.db import connection

T = TypeVar("T")

_scope: ContextVar[dict | None] = ContextVar("legalmem_transaction_memo", default=None)


@contextmanager
def memo_scope() -> Iterator[None]:
    """Remember locks and checks until the block ends; open it inside the transaction it is for."""
    if not connection.in_atomic_block:
        raise RuntimeError("memo_scope() belongs inside a transaction")
    token = _scope.set({})
    try:
        yield
    finally:
        _scope.reset(token)


def in_memo_scope() -> bool:
    """Is a turn transaction's memo open (the caller holds the whole turn in one transaction)?"""
    return _scope.get() is not None


def _still_held(entry: tuple[frozenset, object] | None) -> bool:
    return entry is not None and entry[0] <= frozenset(connection.savepoint_ids)


def remembered(key: Hashable, compute: Callable[[], T]) -> T:
    """``compute()``'s value, computed once per scope while the savepoints it ran in are open."""
    memo = _scope.get()
    if memo is None:
        return compute()
    entry = memo.get(key)
    if _still_held(entry):
        return entry[1]
    value = compute()
    memo[key] = (frozenset(connection.savepoint_ids), value)
    return value


def first_time(key: Hashable) -> bool:
    """True the first time ``key`` is seen in this scope (always True outside a scope): run the
    statement it stands for only then."""
    memo = _scope.get()
    if memo is None:
        return True
    if _still_held(memo.get(key)):
        return False
    memo[key] = (frozenset(connection.savepoint_ids), True)
    return True
