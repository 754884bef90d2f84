"""Embedding generations: which model made the vectors search reads, and the re-embedding runs
that build the next ones beside them (docs/operations.md, "Changing the embedding model")."""
from __future__ import annotations

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class EmbeddingGenerationQuerySet(models.QuerySet["EmbeddingGeneration"]):
    def active(self) -> "EmbeddingGeneration | None":
        """The generation whose vectors are in the ``embedding`` columns now (None: not recorded yet)."""
        return self.filter(state=EmbeddingGeneration.State.ACTIVE).first()

    def encoding(self) -> "EmbeddingGeneration | None":
        """The run whose vectors are being written to the ``embedding_next`` shadow columns."""
        return self.filter(state=EmbeddingGeneration.State.ENCODING).first()

    def retired(self) -> "EmbeddingGeneration | None":
        """The previous generation whose vectors still sit in the ``embedding_old`` columns."""
        return self.filter(state=EmbeddingGeneration.State.RETIRED).first()


class EmbeddingGeneration(models.Model):
    """One set of vectors for every note, message and persona trait, made by one backend/model.

    At most one generation is active (search reads it), at most one is encoding (shadow
    columns), at most one is retired (old columns kept until ``reembed --drop-old``)."""

    class State(models.TextChoices):
        ENCODING = "encoding", _("encoding (shadow vectors being written)")
        ACTIVE = "active", _("active (search reads these vectors)")
        RETIRED = "retired", _("retired (old vectors kept until dropped)")
        DROPPED = "dropped", _("dropped")
        ABORTED = "aborted", _("aborted")

    backend = models.CharField(_("backend"), max_length=20)
    model = models.CharField(_("model"), max_length=200, blank=True)
    dimensions = models.PositiveIntegerField(_("dimensions"))
    state = models.CharField(_("state"), max_length=10, choices=State.choices)
    progress = models.JSONField(
        _("progress"), default=dict, blank=True,
        help_text=_("Per table: rows that need a vector and rows that have the new one."),
    )
    encoded = models.PositiveIntegerField(_("vectors written"), default=0)
    batches = models.PositiveIntegerField(_("batches"), default=0)
    encode_seconds = models.FloatField(_("seconds spent encoding"), default=0.0)
    indexes_built = models.BooleanField(_("indexes built"), default=False)
    started_at = models.DateTimeField(_("started at"), default=timezone.now)
    encoded_at = models.DateTimeField(_("encoded at"), null=True, blank=True)
    switched_at = models.DateTimeField(_("switched at"), null=True, blank=True)
    dropped_at = models.DateTimeField(_("dropped at"), null=True, blank=True)
    last_error = models.CharField(_("last error"), max_length=500, blank=True)

    objects = EmbeddingGenerationQuerySet.as_manager()

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["state"], condition=models.Q(state__in=["encoding", "active", "retired"]),
                name="one_embedding_generation_per_state",
            ),
        ]
        verbose_name = _("embedding generation")
        verbose_name_plural = _("embedding generations")

    def __str__(self) -> str:
        return f"{self.identity} ({self.dimensions}-d, {self.state})"

    @property
    def identity(self) -> str:
        """What the start-up check compares: the backend, and the model for a server backend."""
        return f"{self.backend}:{self.model}" if self.model else self.backend
