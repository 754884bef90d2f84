"""A re-embedding run from start to drop: start (or resume), encode, switch, drop the old
vectors, or abort. docs/operations.md, "Changing the embedding model".

Search reads ``embedding`` throughout: the run writes only the shadow columns, the switch
renames the shadow columns into place in one transaction (tables locked, checks first), and
the old vectors stay in ``embedding_old`` until ``drop_old``. Every step is in the audit log.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator

from django.db import OperationalError, connection, transaction
from django.utils import timezone

from infra.embeddings import Embedder, embedder_identity
from memory.models import AuditEvent, EmbeddingGeneration
from memory.services.audit import record
from memory.embedding_schema import shadow
from memory.embedding_schema.encoding import EncodeResult, encode_pending, table_progress
from memory.embedding_schema.tables import VECTOR_TABLES

ACTOR = "system:reembed"
ADVISORY_LOCK = 1_702_517_733  # one reembed command at a time, whatever the process
SWITCH_ATTEMPTS = 5
SWITCH_LOCK_TIMEOUT = "10s"


class ReembedError(Exception):
    """A step that cannot go ahead; the message says why and what to run instead. Nothing was changed."""


class _RowsStillPending(Exception):
    """Rows were written between the catch-up and the lock: catch up again."""


@contextmanager
def only_run() -> Iterator[None]:
    """Hold the database-wide re-embedding lock for the block (a second command refuses)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(%s)", [ADVISORY_LOCK])
        if not cursor.fetchone()[0]:
            raise ReembedError("another `manage.py reembed` is running against this database")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [ADVISORY_LOCK])


def _audit(event: AuditEvent, generation: EmbeddingGeneration, **extra) -> None:
    record(actor=ACTOR, event=event, firm=None, object_type="embedding_generation",
           object_id=generation.pk, **extra)


def record_active_generation(embedder: Embedder) -> EmbeddingGeneration:
    """The active generation; a database older than generations adopts the backend that passed
    the start-up check (``check_embeddings``) as the one its vectors were made with."""
    active = EmbeddingGeneration.objects.active()
    if active is not None:
        return active
    return EmbeddingGeneration.objects.create(
        backend=embedder.name, model=getattr(embedder, "model", ""), dimensions=embedder.dimensions,
        state=EmbeddingGeneration.State.ACTIVE, switched_at=timezone.now(),
    )


def start_or_resume(embedder: Embedder, current: Embedder) -> tuple[EmbeddingGeneration, bool]:
    """The run for ``embedder``: the one in progress, or a new one (shadow columns, trigger,
    ``reembed_started``). ``current`` is the configured backend (adopted if none is recorded).
    Returns the generation and whether it started now."""
    identity = embedder_identity(embedder)
    retired = EmbeddingGeneration.objects.retired()
    if retired is not None or shadow.has_column("memory_note", "embedding_old"):
        name = retired.identity if retired else "the previous backend"
        raise ReembedError(f"the old vectors of {name} are still kept; drop them first with "
                           f"`manage.py reembed --drop-old`")
    running = EmbeddingGeneration.objects.encoding()
    if running is not None:
        if running.identity != identity:
            raise ReembedError(f"a run for {running.identity} is in progress; resume it with "
                               f"--backend {running.backend}" + (f" --model {running.model}" if running.model else "")
                               + ", or drop it with `manage.py reembed --abort`")
        width = shadow.column_dimensions("memory_note", "embedding_next")
        if width != embedder.dimensions:
            raise ReembedError(f"the shadow column is vector({width}) but {identity} gives "
                               f"{embedder.dimensions}-d vectors; `manage.py reembed --abort` and start again")
        return running, False
    active = record_active_generation(current)
    if active.identity == identity:
        raise ReembedError(f"{identity} is already the active embedding backend; nothing to do")
    with transaction.atomic():
        if shadow.has_column("memory_note", "embedding_next"):  # unrecorded leftover (e.g. a flushed table)
            shadow.drop_trigger()
            shadow.drop_columns(shadow.SHADOW_SUFFIX)
        generation = EmbeddingGeneration.objects.create(
            backend=embedder.name, model=getattr(embedder, "model", ""), dimensions=embedder.dimensions,
            state=EmbeddingGeneration.State.ENCODING,
        )
        shadow.add_shadow_columns(embedder.dimensions)
        generation.progress = table_progress()
        generation.save(update_fields=["progress"])
        _audit(AuditEvent.REEMBED_STARTED, generation, backend=generation.identity,
               previous=active.identity, dimensions=generation.dimensions, rows=generation.progress)
    return generation, True


def run(
    generation: EmbeddingGeneration,
    embedder: Embedder,
    *,
    batch_size: int,
    max_batches: int | None = None,
    report: Callable[[str], None] | None = None,
) -> EncodeResult:
    """Encode what is queued; once nothing is, build the shadow indexes and mark the run ready
    to switch. With ``max_batches`` it may stop early (the rest stays queued)."""
    result = encode_pending(generation, embedder, batch_size=batch_size, max_batches=max_batches, report=report)
    if not result.stopped_early:
        shadow.build_shadow_indexes(progress=report)
        shadow.analyze()  # the planner's statistics of the shadow columns move with the rename
        more = encode_pending(generation, embedder, batch_size=batch_size, report=report)  # written meanwhile
        result.encoded += more.encoded
        result.batches += more.batches
        generation.indexes_built = True
        generation.encoded_at = timezone.now()
    generation.refresh_from_db(fields=["encoded", "batches", "encode_seconds"])
    generation.progress = table_progress()
    generation.save(update_fields=["progress", "indexes_built", "encoded_at"])
    return result


def _switch_problems(generation: EmbeddingGeneration, embedder: Embedder) -> tuple[list[str], int]:
    """What forbids the switch now, and how many rows still wait for a vector."""
    problems: list[str] = []
    pending = 0
    width = generation.dimensions
    if embedder.dimensions != width:
        problems.append(f"{embedder_identity(embedder)} gives {embedder.dimensions}-d vectors, the run made {width}-d")
    with connection.cursor() as cursor:
        for spec in VECTOR_TABLES:
            column = shadow.column_dimensions(spec.table, "embedding_next")
            if column != width:
                problems.append(f"{spec.table}.embedding_next is vector({column}), expected vector({width})")
                continue
            cursor.execute(
                f"SELECT count(*) FILTER (WHERE embedding IS NOT NULL AND embedding_next IS NULL), "
                f"count(*) FILTER (WHERE embedding IS NULL AND embedding_next IS NOT NULL), "
                f"count(*) FILTER (WHERE embedding_next IS NOT NULL AND vector_dims(embedding_next) <> %s) "
                f"FROM {spec.table}",
                [width],
            )
            missing, orphaned, wrong_width = cursor.fetchone()
            pending += missing
            if orphaned:
                problems.append(f"{spec.table}: {orphaned} row(s) have a new vector but no current one")
            if wrong_width:
                problems.append(f"{spec.table}: {wrong_width} new vector(s) are not {width}-d")
            live = shadow.live_indexes(spec.table)
            shadows = [shadow.shadow_name(name) for name in live]
            valid = shadow.index_validity(shadows)
            for name in shadows:
                if not valid.get(name):
                    problems.append(f"index {name} on {spec.table}.embedding_next is missing or invalid "
                                    f"(run `manage.py reembed --backend {generation.backend}` again to build it)")
    return problems, pending


def switch(
    embedder: Embedder, *, batch_size: int, report: Callable[[str], None] | None = None
) -> EmbeddingGeneration:
    """Catch up, check, and make the run's vectors the live ones in one transaction."""
    generation = EmbeddingGeneration.objects.encoding()
    if generation is None:
        raise ReembedError("no re-embedding run is in progress; start one with `manage.py reembed --backend …`")
    if generation.identity != embedder_identity(embedder):
        raise ReembedError(f"the run in progress is for {generation.identity}, not {embedder_identity(embedder)}")
    if not generation.indexes_built:
        raise ReembedError(f"the run for {generation.identity} has not finished encoding; run "
                           f"`manage.py reembed --backend {generation.backend}` until it reports ready")
    busy = "rows kept being written"
    for _ in range(SWITCH_ATTEMPTS):
        encode_pending(generation, embedder, batch_size=batch_size, report=report)
        try:
            with transaction.atomic():
                return _switch_locked(generation, embedder)
        except _RowsStillPending:
            busy = "rows kept being written"
        except OperationalError as error:  # lock_timeout, or a deadlock with a writer: both rolled back
            busy = f"the tables could not be locked ({str(error).strip()})"
    raise ReembedError(f"{busy} through {SWITCH_ATTEMPTS} attempts; nothing was changed, try again")


def _switch_locked(generation: EmbeddingGeneration, embedder: Embedder) -> EmbeddingGeneration:
    tables = ", ".join(spec.table for spec in VECTOR_TABLES)
    with connection.cursor() as cursor:
        cursor.execute(f"SET LOCAL lock_timeout = '{SWITCH_LOCK_TIMEOUT}'")
        cursor.execute(f"LOCK TABLE {tables} IN SHARE MODE")  # writers wait, searches go on
    problems, pending = _switch_problems(generation, embedder)
    if problems:
        raise ReembedError("switch refused, nothing was changed: " + "; ".join(problems))
    if pending:
        raise _RowsStillPending
    counts = table_progress()
    with connection.cursor() as cursor:
        cursor.execute(f"LOCK TABLE {tables} IN ACCESS EXCLUSIVE MODE")  # the renames; searches wait ms
    shadow.rename_into_place()
    shadow.drop_trigger()
    previous = EmbeddingGeneration.objects.select_for_update().active()
    if previous is not None:
        previous.state = EmbeddingGeneration.State.RETIRED
        previous.save(update_fields=["state"])
    generation.refresh_from_db()
    generation.state = EmbeddingGeneration.State.ACTIVE
    generation.switched_at = timezone.now()
    generation.progress = counts
    generation.save(update_fields=["state", "switched_at", "progress"])
    _audit(AuditEvent.REEMBED_SWITCHED, generation, backend=generation.identity,
           previous=previous.identity if previous else "", dimensions=generation.dimensions, rows=counts)
    return generation


def drop_old() -> EmbeddingGeneration:
    """Drop the retired generation's vectors (``embedding_old``), after the switch only."""
    retired = EmbeddingGeneration.objects.retired()
    if retired is None:
        raise ReembedError("there are no old vectors to drop (the switch has not happened, or they are gone)")
    with transaction.atomic():
        counts = {}
        with connection.cursor() as cursor:
            for spec in VECTOR_TABLES:
                cursor.execute(f"SELECT count(*) FROM {spec.table} WHERE embedding_old IS NOT NULL")
                counts[spec.table] = cursor.fetchone()[0]
        shadow.drop_columns(shadow.OLD_SUFFIX)
        retired.state = EmbeddingGeneration.State.DROPPED
        retired.dropped_at = timezone.now()
        retired.save(update_fields=["state", "dropped_at"])
        _audit(AuditEvent.REEMBED_OLD_DROPPED, retired, backend=retired.identity, rows=counts)
    return retired


def abort() -> EmbeddingGeneration:
    """Give up the run in progress: drop its shadow columns, indexes and trigger."""
    generation = EmbeddingGeneration.objects.encoding()
    if generation is None:
        raise ReembedError("no re-embedding run is in progress")
    with transaction.atomic():
        shadow.drop_trigger()
        shadow.drop_columns(shadow.SHADOW_SUFFIX)
        generation.state = EmbeddingGeneration.State.ABORTED
        generation.save(update_fields=["state"])
        _audit(AuditEvent.REEMBED_ABORTED, generation, backend=generation.identity, encoded=generation.encoded)
    return generation
