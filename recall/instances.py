"""Model instances from rows the search read itself (some of a model's fields, in a known order).

``Model.from_db`` builds an instance through ``Model.__init__``: every concrete field is visited,
the missing ones marked deferred, each value set through its descriptor (~10 µs for a note's 30
fields). A search builds ~150 such instances after the query vector arrives, on two threads that
share the GIL: ~1.5 ms of its critical path. ``instance_from_row`` gives the same instance — the
read fields in ``__dict__``, the others deferred (read from the database when first touched, as
with ``.only()``), ``_state`` of a loaded row — in ~1 µs. No model of these reads has ``__init__``
logic or init signals (the tests compare both constructions field by field).
"""
from __future__ import annotations

from typing import Sequence, TypeVar

from django.db.models import Model
from django.db.models.base import ModelState

M = TypeVar("M", bound=Model)


def instance_from_row(model: type[M], alias: str, names: Sequence[str], row: Sequence) -> M:
    """The ``model`` instance of a database row holding the fields ``names`` (attnames), in order."""
    instance = model.__new__(model)
    state = ModelState()
    state.adding = False
    state.db = alias
    instance._state = state
    instance.__dict__.update(zip(names, row))
    return instance


def fast_timestamps(cursor) -> None:
    """Read ``timestamptz`` columns on this Django cursor with psycopg's own C loader: Django's
    loader is a Python subclass of it (only to set the UTC tzinfo the session's ``TimeZone`` gives
    anyway) and costs ~4 µs a value; a search reads ~250 of them after the query vector. Same
    values, same tzinfo (``tests/recall/test_instances.py``)."""
    from psycopg.types.datetime import TimestamptzLoader

    cursor.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
