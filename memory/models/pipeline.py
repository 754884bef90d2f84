"""The write path's own records: turn extraction jobs, routing decisions, working-memory
consolidation and persona evidence (docs/write-path.md).

Each is the durable, auditable trace of one step after a chat answer, so an operator can
see in admin what was extracted, what was decided and why, and which jobs failed.
"""
from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import VectorField

from memory.models.conversations import Conversation, Message
from memory.models.notes import Note
from memory.models.tenancy import Firm, Matter, auditable_by


class TurnExtractionQuerySet(models.QuerySet["TurnExtraction"]):
    def visible_to(self, user) -> "TurnExtractionQuerySet":
        """Firm admins see their firm's jobs, behind the ethical wall of the conversation's matter."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(auditable_by(user, matter_path="conversation__matter"))


class TurnExtraction(models.Model):
    """One chat turn (user message + assistant reply) on its way into memory: a durable job.

    One row per assistant message (unique), so enqueuing or running a turn twice never
    extracts it twice. ``items`` keeps what the extractor returned, so a resumed job
    routes the same items instead of asking the LLM again.
    """

    class Status(models.TextChoices):
        PENDING = "pending", _("pending")
        RUNNING = "running", _("running")
        DONE = "done", _("done")
        SKIPPED = "skipped", _("skipped (trivial turn)")
        FAILED = "failed", _("failed")

    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="+", verbose_name=_("firm"))
    conversation = models.ForeignKey(
        Conversation, on_delete=models.PROTECT, related_name="turn_extractions",
        verbose_name=_("conversation"),
    )
    user_message = models.ForeignKey(Message, on_delete=models.PROTECT, related_name="+", verbose_name=_("user message"))
    assistant_message = models.OneToOneField(
        Message, on_delete=models.PROTECT, related_name="turn_extraction",
        verbose_name=_("assistant message"),
    )
    source_type = models.CharField(max_length=20, default="chat", verbose_name=_("source type"))
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING, verbose_name=_("status"))
    attempts = models.PositiveIntegerField(default=0, verbose_name=_("attempts"))
    last_error = models.TextField(blank=True, verbose_name=_("last error"))
    engine = models.CharField(max_length=200, blank=True, verbose_name=_("engine"))
    items = models.JSONField(null=True, blank=True, help_text=_("What the extractor returned."), verbose_name=_("items"))
    rejected = models.JSONField(default=list, blank=True, help_text=_("Items the validator refused, with reasons."), verbose_name=_("rejected"))
    added = models.JSONField(
        default=list, blank=True, verbose_name=_("added"),
        help_text=_("Items added from the client's own words that the model left out, with reasons."),
    )
    decisions = models.JSONField(default=list, blank=True, help_text=_("ADD / UPDATE / IGNORE per item."), verbose_name=_("decisions"))
    task_id = models.CharField(max_length=64, blank=True, help_text=_("Last background task enqueued."), verbose_name=_("task id"))
    next_attempt_at = models.DateTimeField(null=True, blank=True, verbose_name=_("next attempt at"))
    started_at = models.DateTimeField(null=True, blank=True, verbose_name=_("started at"))
    # Who runs it now, so a job left by a dead worker is taken over at once (infra/workers.py).
    worker_host = models.CharField(max_length=255, blank=True, verbose_name=_("worker host"))
    worker_pid = models.PositiveIntegerField(null=True, blank=True, verbose_name=_("worker pid"))
    heartbeat_at = models.DateTimeField(null=True, blank=True, verbose_name=_("heartbeat at"))
    finished_at = models.DateTimeField(null=True, blank=True, verbose_name=_("finished at"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    objects = TurnExtractionQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "started_at"], name="turn_status_idx")]
        verbose_name = _("turn extraction")
        verbose_name_plural = _("turn extractions")

    def __str__(self) -> str:
        return f"turn {self.pk} ({self.status})"

    @property
    def source_key(self) -> str:
        return f"turn:{self.pk}"

    # --- the job's states (set here, saved by remember/services/turn_jobs.py) ------------------
    #: What a claim changes on the row (``begin_attempt``).
    CLAIM_FIELDS = ("status", "attempts", "started_at", "heartbeat_at", "worker_host", "worker_pid")
    #: What an extraction sets on the row (``remember.turns.run_extraction``).
    EXTRACTION_FIELDS = ("items", "rejected", "added", "engine")

    @property
    def is_finished(self) -> bool:
        """Done, skipped or failed: no worker runs it again."""
        return self.status in (self.Status.DONE, self.Status.SKIPPED, self.Status.FAILED)

    def begin_attempt(self, now, worker: tuple[str, int]) -> None:
        """pending (or running under a dead worker) → running, held by ``worker`` (host, pid)."""
        self.status = self.Status.RUNNING
        self.attempts += 1
        self.started_at = self.heartbeat_at = now
        self.worker_host, self.worker_pid = worker

    def end(self, status: str, now) -> None:
        """running → done or skipped."""
        self.status = status
        self.finished_at = now
        self.next_attempt_at = None

    def give_up(self, error: str, now) -> None:
        """running → failed, for good, with the error."""
        self.last_error = error
        self.status = self.Status.FAILED
        self.finished_at = now
        self.next_attempt_at = None

    def retry_at(self, error: str, when, *, attempt_lost: bool = True) -> None:
        """running → pending until ``when``, with the error; an attempt the worker was told to
        stop does not count (``attempt_lost=False``)."""
        self.last_error = error
        if not attempt_lost:
            self.attempts = max(0, self.attempts - 1)
        self.status = self.Status.PENDING
        self.next_attempt_at = when


class ConsolidationQuerySet(models.QuerySet["Consolidation"]):
    def visible_to(self, user) -> "ConsolidationQuerySet":
        if not user.is_authenticated:
            return self.none()
        return self.filter(auditable_by(user, matter_path="conversation__matter"))


class Consolidation(models.Model):
    """Working-memory overflow: the oldest messages of a conversation moved to long-term memory."""

    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="+", verbose_name=_("firm"))
    conversation = models.ForeignKey(
        Conversation, on_delete=models.PROTECT, related_name="consolidations",
        verbose_name=_("conversation"),
    )
    engine = models.CharField(max_length=200, blank=True, verbose_name=_("engine"))
    items = models.JSONField(default=list, blank=True, verbose_name=_("items"))
    decisions = models.JSONField(default=list, blank=True, verbose_name=_("decisions"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = ConsolidationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("consolidation")
        verbose_name_plural = _("consolidations")

    @property
    def source_key(self) -> str:
        return f"consolidation:{self.pk}"


class ConsolidatedMessage(models.Model):
    """Marks a message as out of working memory (archived; still stored and searchable)."""

    message = models.OneToOneField(
        Message, on_delete=models.PROTECT, primary_key=True, related_name="consolidated",
        verbose_name=_("message"),
    )
    consolidation = models.ForeignKey(
        Consolidation, on_delete=models.PROTECT, related_name="messages",
        verbose_name=_("consolidation"),
    )
    consolidated_at = models.DateTimeField(auto_now_add=True, verbose_name=_("consolidated at"))

    class Meta:
        verbose_name = _("consolidated message")
        verbose_name_plural = _("consolidated messages")


class RoutingDecision(models.Model):
    """What the router did with one extracted item, and why (ADD / UPDATE / IGNORE / PERSONA).

    Written in the same transaction as the note it produces; unique per source (turn or
    consolidation) and content hash, so a job that runs twice cannot write an item twice.
    """

    class Action(models.TextChoices):
        ADD = "add", _("add")
        UPDATE = "update", _("update")
        IGNORE = "ignore", _("ignore")
        PERSONA = "persona", _("persona evidence")

    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="+", verbose_name=_("firm"))
    matter = models.ForeignKey(Matter, on_delete=models.PROTECT, null=True, blank=True, related_name="+", verbose_name=_("matter"))
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        verbose_name=_("owner"),
    )
    source_key = models.CharField(max_length=64, verbose_name=_("source key"))
    turn = models.ForeignKey(
        TurnExtraction, on_delete=models.PROTECT, null=True, blank=True, related_name="routing",
        verbose_name=_("turn"),
    )
    consolidation = models.ForeignKey(
        Consolidation, on_delete=models.PROTECT, null=True, blank=True, related_name="routing",
        verbose_name=_("consolidation"),
    )
    item_index = models.PositiveIntegerField(verbose_name=_("item index"))
    content = models.TextField(verbose_name=_("content"))
    content_hash = models.CharField(max_length=64, verbose_name=_("content hash"))
    category = models.CharField(max_length=20, verbose_name=_("category"))
    action = models.CharField(max_length=10, choices=Action.choices, verbose_name=_("action"))
    reason = models.CharField(max_length=500, verbose_name=_("reason"))
    note = models.ForeignKey(
        Note, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text=_("The note written (ADD/UPDATE) or reinforced (IGNORE as duplicate)."),
        verbose_name=_("note"),
    )
    previous = models.ForeignKey(
        Note, on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        help_text=_("The note this item was compared with (superseded on UPDATE)."),
        verbose_name=_("previous"),
    )
    similarity = models.FloatField(null=True, blank=True, verbose_name=_("similarity"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        ordering = ["source_key", "item_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["source_key", "content_hash"], name="routing_unique_item_per_source"
            )
        ]
        verbose_name = _("routing decision")
        verbose_name_plural = _("routing decisions")

    def __str__(self) -> str:
        return f"{self.action}: {self.content[:60]}"

    def as_dict(self) -> dict:
        return {
            "item": self.item_index,
            "action": self.action,
            "reason": self.reason,
            "content": self.content[:200],
            "note": str(self.note_id) if self.note_id else None,
            "previous": str(self.previous_id) if self.previous_id else None,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
        }


class PersonaTraitQuerySet(models.QuerySet["PersonaTrait"]):
    def visible_to(self, user) -> "PersonaTraitQuerySet":
        """A user's persona is theirs alone (like their user_profile notes)."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(user=user, firm__in=Firm.objects.of_user(user))


class PersonaTrait(models.Model):
    """One attribute or preference of a user, gathered from evidence until it is strong
    enough to become a ``user_profile`` note (docs/memory-model.md, persona)."""

    class Status(models.TextChoices):
        FORMING = "forming", _("forming (not yet promoted)")
        PROMOTED = "promoted", _("promoted to the profile")
        DISPUTED = "disputed", _("promoted, disputed by contrary evidence")
        SUPERSEDED = "superseded", _("superseded by a stronger trait")

    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="+", verbose_name=_("firm"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="persona_traits",
        verbose_name=_("user"),
    )
    content = models.TextField(verbose_name=_("content"))
    category = models.CharField(max_length=20, verbose_name=_("category"))
    embedding = VectorField(dimensions=settings.NOTE_EMBEDDING_DIMENSIONS, null=True, blank=True, verbose_name=_("embedding"))
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.FORMING, verbose_name=_("status"))
    note = models.ForeignKey(Note, on_delete=models.SET_NULL, null=True, blank=True, related_name="+", verbose_name=_("note"))
    conflicts_with = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+",
        verbose_name=_("conflicts with"),
    )
    evidence_count = models.PositiveIntegerField(default=0, verbose_name=_("evidence count"))
    base_confidence = models.FloatField(default=0.0, verbose_name=_("base confidence"))
    strength = models.FloatField(default=0.0, verbose_name=_("strength"))
    last_evidence_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last evidence at"))
    decision = models.CharField(max_length=500, blank=True, help_text=_("Last promotion decision and why."), verbose_name=_("decision"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    objects = PersonaTraitQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["firm", "user", "status"], name="persona_trait_user_idx")]
        verbose_name = _("persona trait")
        verbose_name_plural = _("persona traits")

    def __str__(self) -> str:
        return f"{self.user}: {self.content[:60]} ({self.status})"


class PersonaEvidence(models.Model):
    """One statement supporting a persona trait, with where and when it was said."""

    trait = models.ForeignKey(PersonaTrait, on_delete=models.PROTECT, related_name="evidence", verbose_name=_("trait"))
    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="+", verbose_name=_("firm"))
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+", verbose_name=_("user"))
    source_key = models.CharField(max_length=64, verbose_name=_("source key"))
    content = models.TextField(verbose_name=_("content"))
    content_hash = models.CharField(max_length=64, verbose_name=_("content hash"))
    confidence = models.FloatField(verbose_name=_("confidence"))
    said_at = models.DateTimeField(verbose_name=_("said at"))
    source_message_ids = ArrayField(models.BigIntegerField(), default=list, blank=True, verbose_name=_("source message ids"))
    conversation = models.ForeignKey(
        Conversation, on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        verbose_name=_("conversation"),
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    class Meta:
        ordering = ["said_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source_key", "content_hash"], name="persona_evidence_unique_per_source"
            )
        ]
        verbose_name = _("persona evidence")
        verbose_name_plural = _("persona evidence")
