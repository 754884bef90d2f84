"""The request and result of one memory search, and the errors a caller must handle."""
from __future__ import annotations

import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from django.utils.translation import gettext

from memory.contradictions import Contradiction
from memory.models import Conversation, Message, Note
from documents.search import DocumentHit
from recall.plan import RetrievalPlan
from recall.scoring import ScoreBreakdown

if TYPE_CHECKING:
    from infra.embeddings import QueryEmbedding
    from recall.reach import Reach

MAX_QUERY_CHARS = 2000
MAX_K = 50


class SearchError(Exception):
    """Base of the search errors."""


class InvalidSearch(SearchError, ValueError):
    """Bad input (empty or too long query, bad k, unknown scope or strategy) — a 400."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name
        self.message = message


class UnknownStrategy(InvalidSearch):
    """No strategy of that name is registered; the message (in the active language, as every
    ``InvalidSearch``'s: the API and the MCP server show it as it is) lists the registered ones."""

    def __init__(self, name: str, registered: list[str]) -> None:
        super().__init__("strategy", gettext("unknown strategy %(name)r; the strategies are: %(registered)s") % {
            "name": name[:50], "registered": ", ".join(registered)})
        self.name = name
        self.registered = registered


class NotFound(SearchError, LookupError):
    """A matter or conversation the user may not see (other firm, ethical wall) — a 404."""


@dataclass
class SearchRequest:
    """A validated search: what strategies receive."""

    user: Any
    query: str
    k: int
    strategy: str
    plan: RetrievalPlan
    matter_id: int | None = None
    scopes: tuple[str, ...] | None = None
    conversation: Conversation | None = None
    reach: Reach | None = None  # the user's firm / matter ids, read once by search_memory
    exclude_message_ids: tuple[int, ...] = ()  # e.g. the chat's question itself
    context: str = ""  # the dialogue the question leans on (the chat's earlier lines), for the keyword reads
    # The query's encoding, started by search_memory before the access checks; a strategy reads
    # ``query_vector`` when it needs it, so work without the vector (keyword reads) runs
    # while the encoder does (docs/read-path.md).
    pending_vector: "Future[QueryEmbedding] | None" = field(default=None, repr=False)
    embedding: "QueryEmbedding | None" = field(default=None, repr=False)
    embed_wait_ms: float = 0.0  # how long a strategy waited for the encoder

    @property
    def query_vector(self) -> np.ndarray | None:
        """The query's embedding, waiting for the encoder the first time (raises what it raised)."""
        if self.embedding is None and self.pending_vector is not None:
            started = time.perf_counter()
            self.embedding = self.pending_vector.result()
            self.embed_wait_ms = round((time.perf_counter() - started) * 1000, 2)
        return None if self.embedding is None else self.embedding.vector


NOTE = "note"
MESSAGE = "message"


@dataclass
class Hit:
    """One recalled memory — a note, or a raw message ("what was said") — with its layer, rank,
    score breakdown and human-readable reasons. ``kind`` says which; exactly one of ``note`` and
    ``message`` is set."""

    layer: str
    rank: int
    breakdown: ScoreBreakdown
    reasons: list[str] = field(default_factory=list)
    note: Note | None = None
    message: Message | None = None
    kind: str = ""
    partner: Message | None = None  # a message hit's turn partner: the reply to it, or its question
    # A note hit's open contradictions: current notes of the same slot with another value
    # (memory.contradictions), set by ``search_memory`` for every strategy.
    contradictions: list[Contradiction] = field(default_factory=list)

    def __post_init__(self) -> None:
        if (self.note is None) == (self.message is None):
            raise ValueError("a hit is either a note or a message")
        self.kind = self.kind or (NOTE if self.note is not None else MESSAGE)

    @property
    def source_message_ids(self) -> list[int]:
        """The raw messages this hit stands for: a note's provenance, or the messages of the turn
        (the message itself, and its partner — the user's question first)."""
        if self.note is not None:
            return list(self.note.source_message_ids)
        return [m.pk for m in self.turn_messages]

    @property
    def turn_messages(self) -> list[Message]:
        """A message hit's turn in the order it was said: the question, then the reply."""
        if self.message is None:
            return []
        if self.partner is None:
            return [self.message]
        return sorted((self.message, self.partner), key=lambda m: (m.role != Message.Role.USER, m.said_at, m.pk))


@dataclass
class MessageMatch:
    """A raw message recalled for the question (also one of the hits, kind "message")."""

    message: Message
    rank: float


@dataclass
class SearchResult:
    strategy: str
    query: str
    plan: RetrievalPlan
    hits: list[Hit]
    timings: dict[str, float] = field(default_factory=dict)  # milliseconds per stage
    stats: dict[str, int] = field(default_factory=dict)
    # The question's names and identifiers nothing the user may see holds: the search returned
    # nothing rather than memories about something else (recall/anchors.py).
    nothing_on: list[str] = field(default_factory=list)
    # The document passages for the query (recall/search.py, ``search_memory`` adds them after
    # any strategy ran): a separate source beside the notes and messages, each with its citation.
    passages: list[DocumentHit] = field(default_factory=list)
    # The raw-turn search's first messages (``recall.fusion.RawFloor``) that the hits must cover
    # through their provenance, whatever reorders them after the strategy (docs/read-path.md).
    raw_floor: tuple[int, ...] = ()

    def uncovered_floor(self) -> list[int]:
        """The floor messages no hit's provenance names (empty when the floor holds)."""
        covered = {message_id for hit in self.hits for message_id in hit.source_message_ids}
        return [message_id for message_id in self.raw_floor if message_id not in covered]

    @property
    def notes(self) -> list[Note]:
        """The note hits only (callers that want knowledge, not raw lines)."""
        return [hit.note for hit in self.hits if hit.note is not None]

    @property
    def messages(self) -> list[MessageMatch]:
        """The message hits, in rank order, with their fused score."""
        return [MessageMatch(hit.message, hit.breakdown.total) for hit in self.hits if hit.message is not None]
