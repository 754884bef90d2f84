"""The bulk import's encoder: one background thread that embeds what routing is about to need
first and the imported messages whenever it would otherwise be idle (docs/performance.md,
"Bulk import path")."""
from __future__ import annotations

import threading
from collections import OrderedDict, deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from infra.embeddings import Embedder

#: Distinct texts remembered by the encoder (an import repeats the same law or reply often).
ENCODER_MEMORY = 4096
#: Message texts encoded between two looks at the routing queue: routing never waits for more
#: than this many message encodes before its own items start.
FILLER_STEP = 4


@dataclass
class _Job:
    texts: list[str]
    future: "Future[np.ndarray]"
    vectors: dict[str, np.ndarray] = field(default_factory=dict)
    position: int = 0


class BackgroundEncoder:
    """Encodes passages on one background thread, each distinct text once (bounded memory).
    ``submit(texts)`` returns a future of the vectors in the texts' order.

    Two queues: what routing waits for (the items of the next turns) is encoded first, in the
    order submitted; ``urgent=False`` work (the imported messages, which nobody needs before
    the end) fills every moment routing leaves the encoder idle, ``FILLER_STEP`` texts at a
    time — so the encoder, the import's floor, is never idle while there is anything to encode
    (docs/performance.md)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self._known: OrderedDict[str, np.ndarray] = OrderedDict()
        self._urgent: deque[_Job] = deque()
        self._filler: deque[_Job] = deque()
        self._wake = threading.Condition()
        self._closed = False
        self.encoded = 0  # distinct texts actually encoded
        self._thread = threading.Thread(target=self._run, name="bulk-encoder", daemon=True)
        self._thread.start()

    def submit(self, texts: Sequence[str], *, urgent: bool = True) -> "Future[np.ndarray]":
        job = _Job(list(texts), Future())
        with self._wake:
            if self._closed:
                raise RuntimeError("the encoder is closed")
            (self._urgent if urgent else self._filler).append(job)
            self._wake.notify()
        return job.future

    def _next(self) -> tuple[_Job, int] | None:
        """The job to work on and how many of its texts to encode now (None: closed)."""
        with self._wake:
            while not (self._urgent or self._filler or self._closed):
                self._wake.wait()
            if self._closed:
                return None
            if self._urgent:
                job = self._urgent[0]
                return job, len(job.texts)
            return self._filler[0], FILLER_STEP

    def _run(self) -> None:
        while (work := self._next()) is not None:
            job, count = work
            try:
                self._encode(job, count)
            except Exception as exc:  # noqa: BLE001 - the waiting side gets it (the turn fails, messages stay queued)
                self._finish(job, exc)
                continue
            if job.position >= len(job.texts):
                self._finish(job, None)

    def _encode(self, job: _Job, count: int) -> None:
        part = job.texts[job.position:job.position + count]
        missing = [t for t in dict.fromkeys(part) if t not in job.vectors and t not in self._known]
        fresh = dict(zip(missing, self.embedder.embed_passages(missing))) if missing else {}
        for text in part:
            if text not in job.vectors:
                job.vectors[text] = fresh[text] if text in fresh else self._known[text]
        job.position += len(part)
        self.encoded += len(fresh)
        self._known.update(fresh)
        while len(self._known) > ENCODER_MEMORY:  # bounded: forget the oldest
            self._known.popitem(last=False)

    def _finish(self, job: _Job, error: Exception | None) -> None:
        with self._wake:
            queue = self._urgent if self._urgent and self._urgent[0] is job else self._filler
            queue.popleft()
        if error is not None:
            job.future.set_exception(error)
            return
        vectors = np.array([job.vectors[t] for t in job.texts], dtype=np.float32)
        job.future.set_result(vectors.reshape(len(job.texts), self.embedder.dimensions))

    def close(self) -> None:
        """Stop after the texts being encoded now; what is still queued is cancelled."""
        with self._wake:
            self._closed = True
            self._wake.notify()
        self._thread.join()
        for job in [*self._urgent, *self._filler]:
            job.future.cancel()
        self._urgent.clear()
        self._filler.clear()
