"""Every turn is memory: raw messages get their embedding in batches, off the chat's path.

A message's keyword terms are written when it is saved (``search_text``, and the stored
``search_vector`` PostgreSQL derives from it), so it is found by keywords at once. Its
embedding comes later, in batches:

- the turn job (``process_turn``) first embeds every not-yet-embedded message of its
  conversation — the question of a cancelled or failed reply included (its turn is enqueued
  too), and anything an earlier failed run left behind;
- ``import_transcript`` embeds each imported conversation's messages in batches;
- ``manage.py index_messages`` (run by ``make run`` before the worker starts) embeds whatever
  is left: messages of databases older than this column, or of a crashed worker.

The column itself is the queue (``embedding IS NULL``): nothing is lost when a job dies, and
running twice writes the same vectors. Only complete messages are embedded (a cancelled
reply's partial text is not something that was said).
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Iterable

from django.db import transaction
from django.db.models import QuerySet

from infra.logs.jobs import job_run
from infra.embeddings import get_embedder
from memory.embedding_text import embedding_text
from memory.models import Message
from memory.services.conversations import message_embeddings_save

#: Messages embedded per batch by the indexing job and by import (docs/turn-memory.md).
MESSAGE_INDEX_BATCH = 64

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger("legalmem.pipeline")


def pending_messages() -> QuerySet[Message]:
    """Complete messages still without an embedding: the indexing queue."""
    return Message.objects.searchable().not_embedded()


def index_batch(message_ids: Iterable[int]) -> int:
    """Embed these messages (those still without an embedding) in one encoder batch. Rows are
    locked and skipped when another worker holds them, so two workers never embed one twice."""
    embedder = get_embedder()
    with transaction.atomic():
        messages = list(
            pending_messages().filter(pk__in=list(message_ids))
            .select_for_update(skip_locked=True).only("id", "role", "speaker", "content", "external_id")
        )
        if not messages:
            return 0
        vectors = embedder.embed_passages([embedding_text(m) for m in messages])
        for message, vector in zip(messages, vectors):
            message.embedding = vector
            message.embedding_model = embedder.name
        message_embeddings_save(messages)
    return len(messages)


def store_vectors(vectors: dict[int, "np.ndarray"], model_name: str) -> int:
    """Write embeddings computed elsewhere (the bulk import's encoder thread) to those of
    these messages still waiting; rows another worker holds are skipped, as in ``index_batch``."""
    if not vectors:
        return 0
    with transaction.atomic():
        messages = list(
            pending_messages().filter(pk__in=list(vectors)).select_for_update(skip_locked=True).only("id")
        )
        for message in messages:
            message.embedding = vectors[message.pk]
            message.embedding_model = model_name
        message_embeddings_save(messages)
    return len(messages)


def index_messages(queryset=None, *, limit: int | None = None, progress=None) -> int:
    """Embed the not-yet-embedded messages of ``queryset`` (default: all), oldest first, in
    batches of ``MESSAGE_INDEX_BATCH``; returns how many were embedded. Raises what the
    embedder raises (``EmbeddingUnavailable``): what is done stays done, the rest stays queued."""
    base = (queryset if queryset is not None else Message.objects.all()) & pending_messages()
    size = MESSAGE_INDEX_BATCH
    done = 0
    last_id = 0
    while limit is None or done < limit:
        ids = list(base.filter(pk__gt=last_id).order_by("pk").values_list("pk", flat=True)[:size])
        if not ids:
            break
        last_id = ids[-1]
        done += index_batch(ids)
        if progress:
            progress(done)
    return done


def index_conversation(conversation_id: int) -> int:
    """The turn job's step: embed what the conversation still lacks (errors are logged, not
    raised — the extraction that follows retries the job on an embedding outage anyway)."""
    with job_run("index_messages", conversation_id=conversation_id) as run:
        try:
            done = index_messages(Message.objects.filter(conversation_id=conversation_id))
        except Exception:  # noqa: BLE001 - the messages stay queued (embedding IS NULL)
            logger.exception("indexing the messages of conversation %s failed; they stay queued", conversation_id)
            run.note(outcome="failed", messages=0)
            return 0
        run.note(messages=done)
        return done
