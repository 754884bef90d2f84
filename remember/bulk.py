"""The bulk write path: many turns at once (an import), with the same notes, routing decisions
and links as running ``process_turn`` on each turn in order (docs/performance.md, "Bulk import
path"). Routing stays sequential — each note is compared with the notes written before it —
and everything else is arranged around the encoder, the import's floor:

- ``BulkRun`` starts the encoder (remember/encoder.py) before the file is stored; each
  stored conversation's messages are queued at once, as filler for every idle moment;
- turns are claimed a window at a time (one locked read, one bulk update) shortly before they
  run, so a long import never looks like a dead worker's (``TURN_LEASE_SECONDS``); a window is
  extracted, its extractions stored in one transaction, and its items queued first;
- each turn is routed in **one transaction without savepoints**, with what holds until the
  commit done once per turn (memory/transaction_memo.py) and its audit entries and
  routing decisions inserted together; a failure rolls the turn back and it is retried like
  any failed job;
- message embeddings are written with one bulk update per encoder batch, as they come.
"""
from __future__ import annotations

import logging
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np
from django.db import transaction

from infra.embeddings import Embedder, get_embedder
from memory.models import Message, TurnExtraction
from memory.embedding_text import embedding_text
from remember.message_index import pending_messages, store_vectors
from remember.apply import TurnGone
from remember.services.decisions import read_decisions_of
from remember.encoder import BackgroundEncoder
from remember.services.consolidation import do_consolidate_overflow
from memory.services.audit import batched as batched_audit
from memory.transaction_memo import memo_scope
from remember.services.turn_jobs import SYSTEM_ACTOR, do_claim_turns, do_store_extractions, heartbeat
from remember.turns import after_failure, apply_turn, items_to_write, run_extraction, unless_skipped

logger = logging.getLogger("legalmem.pipeline")

#: Turns claimed, extracted and sent to the encoder together; the next window is encoded
#: while this one is routed.
WINDOW_TURNS = 64
@dataclass
class _Window:
    turn_ids: list[int]
    claimed: dict[int, TurnExtraction] = field(default_factory=dict)
    items: dict[int, "Future[np.ndarray]"] = field(default_factory=dict)


@dataclass
class BulkOutcome:
    """What the bulk run did beyond the turn rows: messages embedded, distinct texts encoded."""

    messages_indexed: int = 0
    texts_encoded: int = 0
    message_errors: list[str] = field(default_factory=list)
    #: Seconds the import's own thread waited for the encoder: the rest of its wall time is the
    #: work an embeddings server would not take away (bench/bench_import.py prints both).
    waited_for_encoder: float = 0.0


class BulkRun:
    """One bulk import's encoder and message queue. Open it before the messages are stored and
    hand it each stored conversation (``queue_messages``): the encoder starts on those messages
    at once, while the rest of the file is stored and the first turns are extracted; then
    ``process`` runs the turns. Closing it stops the encoder (``with BulkRun() as run: …``)."""

    def __init__(self, embedder: Embedder | None = None) -> None:
        self.encoder = BackgroundEncoder(embedder or get_embedder())
        self.outcome = BulkOutcome()
        self._messages: list[tuple[list[int], "Future[np.ndarray]"]] = []
        self._queued: set[int] = set()

    def __enter__(self) -> "BulkRun":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def close(self) -> None:
        self.encoder.close()
        self.outcome.texts_encoded = self.encoder.encoded

    def queue_messages(self, messages, batch: int = 256) -> None:
        """Queue these messages (a Message queryset) still waiting for their embedding; they are
        encoded whenever routing does not need the encoder, and stored as they become ready."""
        rows = [m for m in (messages & pending_messages()).order_by("pk").only(
            "id", "role", "speaker", "content", "external_id") if m.pk not in self._queued]
        for start in range(0, len(rows), batch):
            part = rows[start:start + batch]
            self._queued.update(m.pk for m in part)
            self._messages.append(([m.pk for m in part], self.encoder.submit(
                [embedding_text(m) for m in part], urgent=False)))

    def store_messages(self, *, wait: bool) -> None:
        """Write the message vectors that are ready (all of them when ``wait``)."""
        waiting = []
        for ids, future in self._messages:
            if not wait and not future.done():
                waiting.append((ids, future))
                continue
            try:
                vectors = self._wait(future)
            except Exception as exc:  # noqa: BLE001 - the messages stay queued (embedding IS NULL)
                logger.warning("embedding %d imported messages failed; they stay queued: %s", len(ids), exc)
                self.outcome.message_errors.append(f"{type(exc).__name__}: {exc}")
                continue
            self.outcome.messages_indexed += store_vectors(dict(zip(ids, vectors)), self.encoder.embedder.name)
        self._messages = waiting

    def _wait(self, future: "Future[np.ndarray]") -> np.ndarray:
        started = time.perf_counter()
        try:
            return future.result()
        finally:
            self.outcome.waited_for_encoder += time.perf_counter() - started

    def process(self, turn_ids: Sequence[int], *, on_turn: Callable[[TurnExtraction], None],
                leftover_messages=None, window_turns: int | None = None) -> BulkOutcome:
        """Run these turn jobs in order, as ``process_turn`` would one by one, and embed their
        messages (plus the still-waiting ones of ``leftover_messages``, a Message queryset).
        ``on_turn(turn)`` is called with each turn's row after it ran (or as it stands, when it
        was finished or held elsewhere). Errors of one turn are recorded on that turn."""
        window_turns = window_turns or WINDOW_TURNS
        windows = deque(_Window(list(turn_ids[i:i + window_turns])) for i in range(0, len(turn_ids), window_turns))
        # The claimed jobs beat a heartbeat while the import runs, as a worker's do: a long window
        # is never taken for a dead worker's (infra/workers.py).
        with heartbeat(*turn_ids):
            ready: _Window | None = None
            if windows:
                ready = windows.popleft()
                self._prepare(ready)
            while ready is not None:
                upcoming = windows.popleft() if windows else None
                if upcoming is not None:
                    self._prepare(upcoming)  # encoded on the other core while `ready` is routed
                self._route(ready, on_turn)
                ready = upcoming
        if leftover_messages is not None:
            self.queue_messages(leftover_messages)
        self.store_messages(wait=True)
        self.outcome.texts_encoded = self.encoder.encoded
        return self.outcome

    def _prepare(self, window: _Window) -> None:
        """Claim and extract the window's turns and queue everything it needs encoded."""
        window.claimed = do_claim_turns(window.turn_ids)
        extracted = []
        for turn_id in window.turn_ids:
            turn = window.claimed.get(turn_id)
            if turn is None or turn.items is not None:
                continue
            try:
                run_extraction(turn)
            except Exception as exc:  # noqa: BLE001 - recorded, retried or failed as in process_turn
                after_failure(turn, exc)
                window.claimed.pop(turn_id)
                continue
            extracted.append(turn)
        for gone in set(t.pk for t in extracted) - do_store_extractions(extracted):
            window.claimed.pop(gone)  # erased meanwhile (docs/records.md)
        for turn_id in window.turn_ids:
            turn = window.claimed.get(turn_id)
            if turn is None or not unless_skipped(turn):
                continue  # skipped: finished, nothing to route
            texts = [item.content for item in items_to_write(turn)]
            if texts:
                window.items[turn_id] = self.encoder.submit(texts)
        message_ids = [i for t in window.claimed.values() for i in (t.user_message_id, t.assistant_message_id)
                       if i not in self._queued]
        if message_ids:  # not queued when its conversation was stored (a re-import's leftovers)
            self.queue_messages(Message.objects.filter(pk__in=message_ids))

    def _route(self, window: _Window, on_turn: Callable[[TurnExtraction], None]) -> None:
        for turn_id in window.turn_ids:
            turn = window.claimed.get(turn_id)
            if turn is not None and turn.status == TurnExtraction.Status.RUNNING:
                turn = _run_turn(turn, window.items.get(turn_id), self._wait)
            if turn is None or turn.status == TurnExtraction.Status.RUNNING:
                turn = TurnExtraction.objects.select_related(
                    "conversation", "user_message", "assistant_message").filter(pk=turn_id).first()
                if turn is None:  # erased while the import ran
                    continue
            on_turn(turn)
            self.store_messages(wait=False)


def _run_turn(turn: TurnExtraction, items: "Future[np.ndarray] | None",
              wait: Callable[["Future[np.ndarray]"], np.ndarray]) -> TurnExtraction | None:
    """Route one claimed turn in one transaction; its row afterwards (None: read it again)."""
    try:
        vectors = wait(items) if items is not None else None
        # The turn's items commit together, with its audit entries in one INSERT and its
        # locks taken once (docs/performance.md).
        with transaction.atomic(), memo_scope(), batched_audit():
            read_decisions_of(turn.source_key)
            apply_turn(turn, vectors)
    except TurnGone as gone:  # erased (docs/records.md) or taken over while the import ran: nothing more to count
        logger.info("%s; the import wrote nothing more for it", gone)
        return None
    except Exception as exc:  # noqa: BLE001 - recorded, retried or failed as in process_turn
        if TurnExtraction.objects.filter(pk=turn.pk).exists():  # not erased under it
            after_failure(turn, exc)
        return None
    try:
        do_consolidate_overflow(turn.conversation, actor=SYSTEM_ACTOR)
    except Exception:  # noqa: BLE001 - as process_turn: retried after the next turn
        logger.exception("consolidation of conversation %s failed", turn.conversation_id)
    return turn


def process_turns_in_bulk(
    turn_ids: Sequence[int],
    *,
    on_turn: Callable[[TurnExtraction], None],
    leftover_messages=None,
    window_turns: int | None = None,
) -> BulkOutcome:
    """``BulkRun.process`` with a run of its own (nothing queued before)."""
    with BulkRun() as run:
        return run.process(turn_ids, on_turn=on_turn, leftover_messages=leftover_messages,
                           window_turns=window_turns)
