"""Changing the embedding model without losing anything (docs/operations.md, "Changing the
embedding model"): encode every note, message and persona trait into shadow columns beside the
live ones, switch atomically, drop the old vectors by an explicit step.

Public interface (what ``manage.py reembed`` and ``check_embeddings`` call):

- ``start_or_resume(embedder, current)`` → ``(EmbeddingGeneration, started_now)``
- ``run(generation, embedder, batch_size=…, max_batches=None, report=None)`` → ``EncodeResult``
- ``switch(embedder, batch_size=…, report=None)`` → the new active ``EmbeddingGeneration``
- ``drop_old()``, ``abort()``, ``record_active_generation(embedder)``, ``only_run()``
- ``ReembedError``: a refused step, its message says why; nothing was changed
"""
from memory.embedding_schema.encoding import EncodeResult, table_progress
from memory.services.reembed.lifecycle import (
    ReembedError,
    abort,
    drop_old,
    only_run,
    record_active_generation,
    run,
    start_or_resume,
    switch,
)

__all__ = [
    "EncodeResult",
    "ReembedError",
    "abort",
    "drop_old",
    "only_run",
    "record_active_generation",
    "run",
    "start_or_resume",
    "switch",
    "table_progress",
]
