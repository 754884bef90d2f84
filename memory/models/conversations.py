"""Working memory: conversations and their raw messages, the provenance every note points to."""
from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex, VectorField

from memory.models.tenancy import Firm, Matter


class ConversationQuerySet(models.QuerySet["Conversation"]):
    def visible_to(self, user) -> "ConversationQuerySet":
        """A conversation is its owner's, and only while they may still see its matter."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(user=user, firm__memberships__user=user).filter(
            models.Q(matter__isnull=True) | models.Q(matter__in=Matter.objects.assigned_to(user))
        )


class Conversation(models.Model):
    """A chat session of one user in one firm, optionally about one matter."""

    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="conversations", verbose_name=_("firm"))
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="conversations",
        verbose_name=_("user"),
    )
    matter = models.ForeignKey(
        Matter, on_delete=models.PROTECT, null=True, blank=True, related_name="conversations",
        verbose_name=_("matter"),
    )
    title = models.CharField(_("title"), max_length=300, blank=True)
    external_id = models.CharField(
        _("external id"), max_length=200, blank=True, help_text=_("Id in an imported transcript.")
    )
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    updated_at = models.DateTimeField(auto_now=True, verbose_name=_("updated at"))

    objects = ConversationQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["firm", "external_id"],
                condition=~models.Q(external_id=""),
                name="conversation_unique_external_id",
            )
        ]
        verbose_name = _("conversation")
        verbose_name_plural = _("conversations")

    def __str__(self) -> str:
        return self.title or f"conversation {self.pk}"


# Full-text configuration of the search terms of messages and notes: ``english`` stems English
# words and drops English stop words; jieba-segmented Chinese words pass through it unchanged.
SEARCH_CONFIG = "english"


class MessageQuerySet(models.QuerySet["Message"]):
    def visible_to(self, user) -> "MessageQuerySet":
        return self.filter(conversation__in=Conversation.objects.visible_to(user))

    def searchable(self) -> "MessageQuerySet":
        """Messages recall may return: complete ones (a cancelled or failed reply is partial)."""
        return self.filter(status=Message.Status.COMPLETE)

    def not_embedded(self) -> "MessageQuerySet":
        """Messages still waiting for the indexing job (keywords already work for them)."""
        return self.filter(embedding__isnull=True)


class Message(models.Model):
    """One raw chat line. Kept forever (archived, searchable) after working memory moves on."""

    class Role(models.TextChoices):
        USER = "user", _("user")
        ASSISTANT = "assistant", _("assistant")
        SYSTEM = "system", _("system")

    class Status(models.TextChoices):
        STREAMING = "streaming", _("streaming")
        COMPLETE = "complete", _("complete")
        CANCELLED = "cancelled", _("cancelled")
        FAILED = "failed", _("failed")

    conversation = models.ForeignKey(
        Conversation, on_delete=models.PROTECT, related_name="messages",
        verbose_name=_("conversation"),
    )
    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="+", verbose_name=_("firm"))
    role = models.CharField(max_length=10, choices=Role.choices, verbose_name=_("role"))
    speaker = models.CharField(
        _("speaker"), max_length=200, blank=True, help_text=_("Who said it, as named in the source.")
    )
    content = models.TextField(_("content"))
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.COMPLETE, verbose_name=_("status"))
    external_id = models.CharField(
        _("external id"), max_length=200, blank=True, help_text=_("Id in an imported transcript.")
    )
    said_at = models.DateTimeField(_("said at"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))
    search_text = models.TextField(
        blank=True, editable=False, help_text=_("Segmented words for full-text search."),
        verbose_name=_("search text"),
    )
    # --- every turn is memory: keyword terms at save time, the embedding from the indexing job ---
    search_vector = models.GeneratedField(
        expression=SearchVector("search_text", config=SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
        verbose_name=_("search vector"),
    )
    embedding = VectorField(dimensions=settings.NOTE_EMBEDDING_DIMENSIONS, null=True, blank=True, verbose_name=_("embedding"))
    embedding_model = models.CharField(max_length=100, blank=True, verbose_name=_("embedding model"))
    # --- how an assistant reply came about (chat) ---
    # The engine of an answer the offline engine composed from recalled memory: it holds nothing
    # new, so it repeats memory (``repeats_memory``) and the write path reads nothing of it
    # (docs/write-path.md).
    OFFLINE_ENGINE = "offline"
    engine = models.CharField(
        _("engine"), max_length=120, blank=True, help_text=_("llm:<model> or offline.")
    )
    repeats_memory = models.BooleanField(
        _("repeats memory"), default=False,
        help_text=_("A reply that holds nothing but what was recalled for it (an answer the offline engine "
                    "composed, or every sentence a quotation): kept in the conversation, never recalled."),
    )
    recalled = models.JSONField(
        _("recalled notes"), default=list, blank=True,
        help_text=_("The notes recalled for this answer, with their layer and score breakdown."),
    )
    recall_plan = models.JSONField(
        _("recall plan"), default=dict, blank=True,
        help_text=_("The retrieval plan of this answer (layers in order, cues), shown with its recalled notes."),
    )
    citations = models.JSONField(
        _("citations"), default=dict, blank=True,
        help_text=_("The sources this answer cited and the sentences marked by the check (docs/citations.md)."),
    )
    timings = models.JSONField(_("timings"), default=dict, blank=True)
    error = models.CharField(_("error"), max_length=500, blank=True)

    objects = MessageQuerySet.as_manager()

    class Meta:
        ordering = ["said_at", "id"]
        indexes = [
            # A message's turn partner (the next / previous message of its conversation) is one
            # probe of this index even when many messages share a timestamp (imports): the id
            # breaks the tie inside the index (recall/messages.py).
            models.Index(fields=["conversation", "said_at", "id"], name="message_conv_said_id_idx"),
            GinIndex(fields=["search_vector"], name="message_search_vector_gin"),
            # Exact nearest-neighbour reads over a user's conversations: an index-only scan
            # (recall/messages.py); the HNSW graph serves users with very many messages.
            models.Index(
                fields=["conversation"],
                include=["id", "status", "embedding"],
                name="message_conv_vectors",
            ),
            HnswIndex(
                name="message_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            models.Index(
                fields=["id"], condition=models.Q(embedding__isnull=True), name="message_not_embedded"
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "external_id"],
                condition=~models.Q(external_id=""),
                name="message_unique_external_id",
            )
        ]
        verbose_name = _("message")
        verbose_name_plural = _("messages")

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"


class ConversationTerm(models.Model):
    """How many complete messages of a conversation hold a search term (a lexeme of
    ``Message.search_vector``); the row with the empty lexeme counts all of them.

    BM25 needs each query word's document frequency over the messages a user may search; summed
    over the user's visible conversations these rows give it without reading the messages
    (docs/read-path.md, "Raw messages at scale"). PostgreSQL triggers on ``memory_message``
    keep the counts (migration 0015): every insert, update of status or text, and delete —
    chat, import, erasure — in the same transaction as the change itself.
    """

    TOTAL = ""  # the lexeme of the row counting every complete message of the conversation

    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="+", verbose_name=_("conversation")
    )
    lexeme = models.TextField(_("lexeme"), blank=True)
    messages = models.IntegerField(_("messages"))

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["conversation", "lexeme"], name="conversation_term_unique"),
        ]
        verbose_name = _("conversation term")
        verbose_name_plural = _("conversation terms")

    def __str__(self) -> str:
        return f"{self.conversation_id}:{self.lexeme or '*'}={self.messages}"
