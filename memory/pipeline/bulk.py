"""The bulk write path: many turns at once (an import), with the same notes, routing decisions
and links as running ``process_turn`` on each turn in order (docs/performance.md).

Where the time goes on the per-turn path is the encoder (about half) and the database (the
other half, run strictly after it). The bulk path keeps every routing step exactly as it is —
routing stays sequential, because each note is compared with the notes written before it —
and changes only when and where the rest happens:

- turns are claimed a window at a time (one locked read, one bulk update), shortly before
  they run, so a long import never looks like a dead worker's (``TURN_LEASE_SECONDS``);
- extraction of a window runs before its routing, and every text to embed — the items, their
  episodic twins and the window's messages — goes to **one background encoder thread** in
  large batches, each distinct text encoded once. The encoder (C / an HTTP server) releases
  the GIL, so the next window is encoded on the second core while this one is routed;
- each turn's items are routed in **one transaction** (savepoints per item instead of a
  commit per item); a failure rolls the turn back and it is retried like any failed job;
- message embeddings are written with one bulk update per encoder batch.
"""
from __future__ import annotations

import logging
from collections import OrderedDict, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import numpy as np
from django.db import transaction
from django.utils import timezone

from memory.embeddings import Embedder, get_embedder
from memory.models import Message, TurnExtraction
from memory.pipeline.message_index import embedding_text, pending_messages, store_vectors
from memory.pipeline.apply import TurnGone
from memory.pipeline.consolidation import consolidate_overflow
from memory.pipeline.liveness import heartbeat
from memory.services.audit import batched as batched_audit
from memory.services.transaction_memo import memo_scope
from memory.pipeline.turns import (
    CLAIM_FIELDS,
    SYSTEM_ACTOR,
    _after_failure,
    apply_turn,
    claimable,
    extract_items,
    items_to_write,
    mark_running,
)

logger = logging.getLogger("legalmem.pipeline")

#: Turns claimed, extracted and sent to the encoder together; the next window is encoded
#: while this one is routed.
WINDOW_TURNS = 64
#: Distinct texts remembered by the encoder (an import repeats the same law or reply often).
ENCODER_MEMORY = 4096


class BackgroundEncoder:
    """Encodes passages on one background thread, in the order submitted, each distinct text
    once (bounded memory). ``submit`` returns a future of the vectors in the texts' order."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bulk-encoder")
        self._known: OrderedDict[str, np.ndarray] = OrderedDict()
        self.encoded = 0  # distinct texts actually encoded

    def submit(self, texts: Sequence[str]) -> "Future[np.ndarray]":
        return self._pool.submit(self._encode, list(texts))

    def _encode(self, texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._known]
        if missing:
            for text, vector in zip(missing, self.embedder.embed_passages(missing)):
                self._known[text] = vector
            self.encoded += len(missing)
        vectors = np.array([self._known[t] for t in texts], dtype=np.float32)
        while len(self._known) > ENCODER_MEMORY:  # bounded: forget the oldest
            self._known.popitem(last=False)
        return vectors.reshape(len(texts), self.embedder.dimensions)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class _Window:
    turn_ids: list[int]
    claimed: dict[int, TurnExtraction] = field(default_factory=dict)
    items: dict[int, "Future[np.ndarray]"] = field(default_factory=dict)
    messages: list[tuple[list[int], "Future[np.ndarray]"]] = field(default_factory=list)


@dataclass
class BulkOutcome:
    """What the bulk run did beyond the turn rows: messages embedded, distinct texts encoded."""

    messages_indexed: int = 0
    texts_encoded: int = 0
    message_errors: list[str] = field(default_factory=list)


def claim_turns(turn_ids: Iterable[int]) -> dict[int, TurnExtraction]:
    """Claim these jobs in one locked read and one bulk update, with ``claim_turn``'s rules;
    rows another worker holds right now are skipped (they are that worker's)."""
    now = timezone.now()
    with transaction.atomic():
        rows = list(
            TurnExtraction.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(pk__in=list(turn_ids))
            .select_related("conversation__user", "conversation__firm", "conversation__matter",
                            "user_message", "assistant_message")
        )
        claimed = [turn for turn in rows if claimable(turn, now)]
        for turn in claimed:
            mark_running(turn, now)
        TurnExtraction.objects.bulk_update(claimed, [*CLAIM_FIELDS, "updated_at"])
    return {turn.pk: turn for turn in claimed}


def _prepare(window: _Window, encoder: BackgroundEncoder) -> None:
    """Claim and extract the window's turns and queue everything it needs encoded."""
    window.claimed = claim_turns(window.turn_ids)
    for turn_id in window.turn_ids:
        turn = window.claimed.get(turn_id)
        if turn is None:
            continue
        try:
            if not extract_items(turn):
                continue  # skipped: finished, nothing to route
        except Exception as exc:  # noqa: BLE001 - recorded, retried or failed as in process_turn
            _after_failure(turn, exc)
            window.claimed.pop(turn_id)
            continue
        texts = [item.content for item in items_to_write(turn)]
        if texts:
            window.items[turn_id] = encoder.submit(texts)
    message_ids = [i for t in window.claimed.values() for i in (t.user_message_id, t.assistant_message_id)]
    _queue_messages(pending_messages().filter(pk__in=message_ids), window, encoder)


def _queue_messages(messages, window: _Window, encoder: BackgroundEncoder, batch: int = 256) -> None:
    rows = list(messages.order_by("pk").only("id", "role", "speaker", "content", "external_id"))
    for start in range(0, len(rows), batch):
        part = rows[start:start + batch]
        window.messages.append(([m.pk for m in part], encoder.submit([embedding_text(m) for m in part])))


def _store_messages(window: _Window, outcome: BulkOutcome, encoder: BackgroundEncoder, *, wait: bool) -> None:
    """Write the window's message vectors that are ready (all of them when ``wait``)."""
    waiting = []
    for ids, future in window.messages:
        if not wait and not future.done():
            waiting.append((ids, future))
            continue
        try:
            vectors = future.result()
        except Exception as exc:  # noqa: BLE001 - the messages stay queued (embedding IS NULL)
            logger.warning("embedding %d imported messages failed; they stay queued: %s", len(ids), exc)
            outcome.message_errors.append(f"{type(exc).__name__}: {exc}")
            continue
        outcome.messages_indexed += store_vectors(dict(zip(ids, vectors)), encoder.embedder.name)
    window.messages = waiting


def _route(window: _Window, on_turn: Callable[[TurnExtraction], None], outcome: BulkOutcome,
           encoder: BackgroundEncoder) -> None:
    for turn_id in window.turn_ids:
        turn = window.claimed.get(turn_id)
        if turn is not None and turn.status == TurnExtraction.Status.RUNNING:
            try:
                future = window.items.get(turn_id)
                vectors = future.result() if future is not None else None
                # The turn's items commit together, with its audit entries in one INSERT and its
                # locks taken once (docs/performance.md).
                with transaction.atomic(), memo_scope(), batched_audit():
                    apply_turn(turn, vectors)
            except TurnGone:  # erased while the import ran (docs/records.md): nothing more to count
                logger.info("turn %s was erased while the import ran", turn_id)
                continue
            except Exception as exc:  # noqa: BLE001 - recorded, retried or failed as in process_turn
                if not TurnExtraction.objects.filter(pk=turn_id).exists():
                    continue  # erased under it
                _after_failure(turn, exc)
                turn = None
            else:
                try:
                    consolidate_overflow(turn.conversation, actor=SYSTEM_ACTOR)
                except Exception:  # noqa: BLE001 - as process_turn: retried after the next turn
                    logger.exception("consolidation of conversation %s failed", turn.conversation_id)
        if turn is None or turn.status == TurnExtraction.Status.RUNNING:
            turn = TurnExtraction.objects.select_related("conversation", "user_message", "assistant_message").filter(
                pk=turn_id).first()
            if turn is None:  # erased while the import ran
                continue
        on_turn(turn)
        _store_messages(window, outcome, encoder, wait=False)


def process_turns_in_bulk(
    turn_ids: Sequence[int],
    *,
    on_turn: Callable[[TurnExtraction], None],
    leftover_messages=None,
    window_turns: int | None = None,
) -> BulkOutcome:
    """Run these turn jobs in order, as ``process_turn`` would one by one, and embed their
    messages (plus the still-waiting ones of ``leftover_messages``, a Message queryset).
    ``on_turn(turn)`` is called with each turn's row after it ran (or as it stands, when it
    was finished or held elsewhere). Errors of one turn are recorded on that turn."""
    outcome = BulkOutcome()
    window_turns = window_turns or WINDOW_TURNS
    encoder = BackgroundEncoder(get_embedder())
    windows = deque(_Window(list(turn_ids[i:i + window_turns])) for i in range(0, len(turn_ids), window_turns))
    # The claimed jobs beat a heartbeat while the import runs, as a worker's do: a long window
    # is never taken for a dead worker's (memory/pipeline/liveness.py).
    with heartbeat(*turn_ids):
        _run_windows(windows, on_turn, outcome, encoder, leftover_messages)
    outcome.texts_encoded = encoder.encoded
    return outcome


def _run_windows(windows: deque, on_turn: Callable[[TurnExtraction], None], outcome: BulkOutcome,
                 encoder: "BackgroundEncoder", leftover_messages) -> None:
    try:
        ready: _Window | None = None
        if windows:
            ready = windows.popleft()
            _prepare(ready, encoder)
        while ready is not None:
            upcoming = windows.popleft() if windows else None
            if upcoming is not None:
                _prepare(upcoming, encoder)  # encoded on the other core while `ready` is routed
            _route(ready, on_turn, outcome, encoder)
            _store_messages(ready, outcome, encoder, wait=True)
            ready = upcoming
        if leftover_messages is not None:
            rest = _Window([])
            _queue_messages(leftover_messages & pending_messages(), rest, encoder)
            _store_messages(rest, outcome, encoder, wait=True)
    finally:
        encoder.close()


def message_queryset(conversation_ids: Iterable[int]):
    """The messages of these conversations (the import's leftovers are swept from it)."""
    return Message.objects.filter(conversation_id__in=list(conversation_ids))
