"""Counting a re-embedding run's progress on its ``EmbeddingGeneration`` row (the run's steps,
audited, are ``memory.services.reembed``)."""
from __future__ import annotations

from django.db import transaction
from django.db.models import F

from memory.models import EmbeddingGeneration


def embedding_generation_count_batch(generation: EmbeddingGeneration, *, written: int, seconds: float) -> None:
    """Add one encoded batch to the run's counters; call it in the batch's own transaction, so
    a kill keeps both the vectors and their count, or neither."""
    with transaction.atomic(savepoint=False):
        EmbeddingGeneration.objects.filter(pk=generation.pk).update(
            encoded=F("encoded") + written, batches=F("batches") + 1, encode_seconds=F("encode_seconds") + seconds,
        )
