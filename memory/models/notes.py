"""Notes (A-Mem): self-contained pieces of knowledge with layer, provenance and history."""
from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any, Sequence

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
from django.db import models
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext_lazy as _
from pgvector.django import HnswIndex, VectorField

from memory.categories import Category  # noqa: F401  (the one enum, re-exported)
from memory.models.conversations import SEARCH_CONFIG, Conversation, Message
from memory.models.tenancy import Firm, Matter


class MemoryScope(models.TextChoices):
    """The layer a note lives in (docs/memory-model.md); it decides who may see the note."""

    USER_PROFILE = "user_profile", _("用户画像 user profile")
    GLOBAL = "global", _("全局记忆 firm procedures")
    CROSS_CASE = "cross_case", _("跨案经验 cross-case experience")
    GENERAL_LAW = "general_law", _("通用法律 general law")
    CASE = "case", _("历史案件 case facts")


# The layers without a matter or an owner: everyone in the firm sees them. They have their
# own partial HNSW index (``note_embedding_firmwide_hnsw``) and are searched in one walk.
FIRM_WIDE_SCOPES = (MemoryScope.CROSS_CASE, MemoryScope.GENERAL_LAW, MemoryScope.GLOBAL)


class MemoryType(models.TextChoices):
    """AdaMem episodic type."""

    EVENT = "event", _("event")
    FACT = "fact", _("fact")
    ATTRIBUTE = "attribute", _("attribute")


class SourceType(models.TextChoices):
    CHAT = "chat", _("chat")
    IMPORT = "import", _("import")
    CHAT_STORY = "chat_story", _("chat story")
    MANUAL = "manual", _("manual")
    DOCUMENT = "document", _("document")


class NoteQuerySet(models.QuerySet["Note"]):
    def visible_to(
        self,
        user,
        *,
        firm_ids: Sequence[int] | None = None,
        matter_ids: Sequence[int] | None = None,
    ) -> "NoteQuerySet":
        """The one rule for who may see a note; every view, API, consumer and admin page uses it.

        A note is visible when it belongs to one of the user's firms, and
        - it carries a matter: the user is assigned to that matter (ethical wall), and
        - it is a user-profile note: the user owns it, and
        - it is a case note without a matter: the user owns it.
        Firm-wide layers (global, cross_case, general_law) without a matter are visible firm-wide.

        ``firm_ids`` / ``matter_ids``: the user's firms (``Firm.objects.of_user``) and assigned
        matters (``Matter.objects.assigned_to``) when the caller has just read them, as literals
        instead of subqueries (the search hot path: planning and joining the subqueries is a
        measurable part of a search, bench/search_results.md). Only ever pass what those two selectors returned.
        """
        if not user.is_authenticated:
            return self.none()
        if firm_ids is None:
            q_firm = models.Q(firm__in=Firm.objects.of_user(user))
        else:
            q_firm = models.Q(firm_id__in=list(firm_ids))
        if matter_ids is None:
            q_wall = models.Q(matter__isnull=True) | models.Q(matter__in=Matter.objects.assigned_to(user))
        else:
            q_wall = models.Q(matter__isnull=True) | models.Q(matter_id__in=list(matter_ids))
        q_profile = ~models.Q(memory_scope=MemoryScope.USER_PROFILE) | models.Q(owner=user)
        q_case = (
            ~models.Q(memory_scope=MemoryScope.CASE)
            | models.Q(matter__isnull=False)
            | models.Q(owner=user)
        )
        return self.filter(q_firm & q_wall & q_profile & q_case)

    def changeable_by(self, user) -> "NoteQuerySet":
        """Notes ``user`` may correct or forget from the "my memory" page: of those they see,
        their own private notes (profile, matter-less case notes) and the notes of the matters
        they are assigned to; the firm-wide layers only as an admin of that firm
        (docs/my-memory-and-admin.md, "Who may forget what")."""
        firm_wide = models.Q(matter__isnull=True) & models.Q(memory_scope__in=FIRM_WIDE_SCOPES)
        return self.visible_to(user).filter(
            ~firm_wide | models.Q(firm__in=Firm.objects.administered_by(user))
        )

    def active(self) -> "NoteQuerySet":
        """Notes currently valid (not superseded by a newer version)."""
        return self.filter(status=Note.Status.ACTIVE)

    def as_of(self, moment: datetime) -> "NoteQuerySet":
        """The notes that were current in the firm's memory at ``moment`` (system time): stored
        by then and not yet superseded (``retired_at``). Forgotten notes are never returned — the
        user asked that they not be used again — and erased ones no longer exist."""
        return (self.filter(stored_at__lte=moment)
                .filter(models.Q(retired_at__isnull=True) | models.Q(retired_at__gt=moment))
                .exclude(status=Note.Status.FORGOTTEN))

    def in_state(self, status: str, moment: datetime | None = None) -> "NoteQuerySet":
        """The notes of ``status`` now, or — with ``moment`` — as they stood then: ``active``
        is ``as_of(moment)``, ``superseded`` what was already history then, and a forgotten
        note is on no date (the pages' and the API's status filter, one rule)."""
        if moment is None:
            return self.filter(status=status)
        if status == Note.Status.ACTIVE:
            return self.as_of(moment)
        if status == Note.Status.SUPERSEDED:
            return self.known_at(moment).filter(retired_at__lte=moment)
        return self.none()

    def valid_at(self, moment: datetime, *, as_of: datetime | None = None) -> "NoteQuerySet":
        """World time: the notes whose fact held at ``moment`` as the memory knows it now —
        ``valid_from`` (when it was said) by then, and not yet replaced (``valid_to``: when its
        successor was said). A corrected value held until the correction was said. Forgotten
        notes are left out. With ``as_of``, as the memory knew it then (both times): stored by
        then, and a replacement the memory recorded after it (``retired_at``) not yet known."""
        if as_of is None:
            return (self.filter(valid_from__lte=moment)
                    .filter(models.Q(valid_to__isnull=True) | models.Q(valid_to__gt=moment))
                    .exclude(status=Note.Status.FORGOTTEN))
        return (self.known_at(as_of).filter(valid_from__lte=moment)
                .filter(models.Q(valid_to__isnull=True) | models.Q(valid_to__gt=moment)
                        | models.Q(retired_at__gt=as_of)))

    def known_at(self, moment: datetime) -> "NoteQuerySet":
        """Every note the memory held at ``moment``, current then or already superseded (its
        history), forgotten ones left out (``as_of`` for the current ones)."""
        return self.filter(stored_at__lte=moment).exclude(status=Note.Status.FORGOTTEN)

    def with_embedding(self) -> "NoteQuerySet":
        return self.filter(embedding__isnull=False)


def passage_url(document_id: int, page: int, start: int | str, end: int | str) -> str:
    """The document viewer at ``page`` with the passage ``start``–``end`` highlighted: the one
    form of that address, beside the one form of a document source (``Note.document_source``).
    Recalled passages (``documents.search``) and document-made notes both link to it."""
    return f"/documents/{document_id}/?page={page}&start={start}&end={end}"


class Note(models.Model):
    """One self-contained piece of knowledge, never a raw chat line."""

    class Status(models.TextChoices):
        ACTIVE = "active", _("active")
        SUPERSEDED = "superseded", _("superseded")
        # Retired by a user's "forget this" (docs/my-memory-and-admin.md): kept for the audit
        # trail, never recalled again.
        FORGOTTEN = "forgotten", _("forgotten")

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="notes", verbose_name=_("firm"))

    # --- what it says ---
    content = models.TextField(_("content"))
    memory_scope = models.CharField(_("memory scope"), max_length=20, choices=MemoryScope.choices)
    category = models.CharField(_("category"), max_length=20, choices=Category.choices)
    memory_type = models.CharField(
        _("memory type"), max_length=20, choices=MemoryType.choices, default=MemoryType.FACT
    )
    keywords = ArrayField(models.CharField(max_length=100), default=list, blank=True, verbose_name=_("keywords"))
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True, verbose_name=_("tags"))
    context = models.TextField(_("context"), blank=True, help_text=_("One sentence on what it is about."))
    importance = models.FloatField(_("importance"), default=0.5)
    confidence = models.FloatField(_("confidence"), default=0.8)
    mention_count = models.PositiveIntegerField(
        _("mentions"), default=1, help_text=_("How often the same knowledge was stated.")
    )

    # --- provenance ---
    matter = models.ForeignKey(
        Matter, on_delete=models.PROTECT, null=True, blank=True, related_name="notes",
        verbose_name=_("matter"),
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="owned_notes",
        verbose_name=_("owner"),
    )
    conversation = models.ForeignKey(
        Conversation, on_delete=models.PROTECT, null=True, blank=True, related_name="notes",
        verbose_name=_("conversation"),
    )
    subject = models.CharField(
        _("subject"), max_length=200, blank=True, help_text=_("The client or party it is about.")
    )
    source_type = models.CharField(_("source type"), max_length=20, choices=SourceType.choices)
    source_id = models.CharField(_("source id"), max_length=200, blank=True)
    source_message_ids = ArrayField(models.BigIntegerField(), default=list, blank=True, verbose_name=_("source message ids"))
    speaker = models.CharField(_("speaker"), max_length=200, blank=True)
    said_at = models.DateTimeField(_("said at"), null=True, blank=True)
    stored_at = models.DateTimeField(_("stored at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    # --- validity and history ---
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE, verbose_name=_("status"))
    # System time (docs/memory-model.md, "Two times"): ``stored_at`` is when the memory learned
    # it, ``retired_at`` when it left the current memory (superseded or forgotten; cleared by a
    # restore). ``valid_from`` / ``valid_to`` are when the fact held in the world.
    retired_at = models.DateTimeField(_("retired at"), null=True, blank=True)
    valid_from = models.DateTimeField(_("valid from"), default=timezone.now)
    valid_to = models.DateTimeField(_("valid to"), null=True, blank=True)
    superseded_by = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="supersedes",
        verbose_name=_("superseded by"),
    )
    evolution_history = models.JSONField(default=list, blank=True, verbose_name=_("evolution history"))
    content_hash = models.CharField(max_length=64, db_index=True, editable=False, verbose_name=_("content hash"))

    # --- retrieval ---
    search_text = models.TextField(
        blank=True, editable=False, help_text=_("Segmented words for full-text search."),
        verbose_name=_("search text"),
    )
    embedding = VectorField(dimensions=settings.NOTE_EMBEDDING_DIMENSIONS, null=True, blank=True, verbose_name=_("embedding"))
    embedding_model = models.CharField(max_length=100, blank=True, verbose_name=_("embedding model"))

    objects = NoteQuerySet.as_manager()

    class Meta:
        ordering = ["-stored_at"]
        indexes = [
            HnswIndex(
                name="note_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            # The firm-wide layers' own graph: a walk in the full index under their filter
            # rejects ~3 of 4 tuples for their scope alone, so the iterative scan ends early
            # with near misses; here it only skips other firms. Shared by all firms: an index
            # per firm would be opened and planned by every statement on this table
            # (docs/performance.md, "Why the firm-wide layers share one index").
            HnswIndex(
                name="note_embedding_firmwide_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
                condition=models.Q(memory_scope__in=FIRM_WIDE_SCOPES, status="active"),
            ),
            # Case notes by matter (then owner: a user's private matter-less notes), covering
            # every column a case-layer read filters or sorts on: the case layer over all of a
            # user's matters is read exactly with an index-only scan (recall/
            # candidate_sql.py, settings.EXACT_CASE_MAX_ROWS). It holds a second copy of each case note's
            # vector (~1.6 KB per note).
            models.Index(
                fields=["matter", "owner"],
                include=["id", "firm", "memory_scope", "status", "embedding"],
                condition=models.Q(memory_scope="case"),
                name="note_case_vectors",
            ),
            # The user-profile layer (one owner's notes) is read exactly too, from this index
            # alone (recall/candidate_sql.py, ``_vector_parts``).
            models.Index(
                fields=["owner", "matter"],
                include=["id", "firm", "memory_scope", "status", "embedding"],
                condition=models.Q(memory_scope="user_profile"),
                name="note_profile_vectors",
            ),
            models.Index(fields=["firm", "memory_scope", "status"], name="note_firm_scope_idx"),
            models.Index(fields=["firm", "source_type", "source_id"], name="note_source_idx"),
            GinIndex(SearchVector("search_text", config=SEARCH_CONFIG), name="note_search_english_gin"),
            # The notes a message became (a search's explicit reference to what was said,
            # ``note_loading.notes_from_messages``; erasure's provenance walk).
            GinIndex(fields=["source_message_ids"], name="note_source_messages_gin"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(importance__gte=0, importance__lte=1), name="note_importance_0_1"
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0, confidence__lte=1), name="note_confidence_0_1"
            ),
        ]
        verbose_name = _("note")
        verbose_name_plural = _("notes")

    def document_source(self) -> tuple[int, int, str, str] | None:
        """(document id, page, start, end) of a document-made note, None otherwise: its
        ``source_id`` is ``document:<id>:p<page>:<start>-<end>`` (docs/documents.md)."""
        if self.source_type != SourceType.DOCUMENT:
            return None
        parts = self.source_id.split(":")
        if len(parts) != 4 or not parts[1].isdigit() or not parts[2][1:].isdigit() or not parts[2].startswith("p"):
            return None
        start, _, end = parts[3].partition("-")
        return int(parts[1]), int(parts[2][1:]), start, end

    def document_url(self) -> str:
        """The viewer at the page and passage a document-made note came from ("" otherwise)."""
        source = self.document_source()
        if source is None:
            return ""
        return passage_url(*source)

    def __str__(self) -> str:
        return self.content[:80]

    def source_messages(self) -> models.QuerySet[Message]:
        return Message.objects.filter(id__in=self.source_message_ids).order_by("said_at", "id")

    def private_to(self):
        """The single user who may see this note regardless of matter, or None if shared."""
        if self.memory_scope == MemoryScope.USER_PROFILE:
            return self.owner
        if self.memory_scope == MemoryScope.CASE and self.matter_id is None:
            return self.owner
        return None

    def snapshot(self) -> dict[str, Any]:
        """The auditable state of the note (everything but the embedding vector)."""
        return {
            "content": self.content,
            "memory_scope": self.memory_scope,
            "category": self.category,
            "memory_type": self.memory_type,
            "keywords": list(self.keywords),
            "tags": list(self.tags),
            "context": self.context,
            "importance": self.importance,
            "confidence": self.confidence,
            "mention_count": self.mention_count,
            "matter_id": self.matter_id,
            "owner_id": self.owner_id,
            "conversation_id": self.conversation_id,
            "subject": self.subject,
            "source_type": self.source_type,
            "source_id": self.source_id,
            "source_message_ids": list(self.source_message_ids),
            "speaker": self.speaker,
            "said_at": self.said_at.isoformat() if self.said_at else None,
            "status": self.status,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
            "superseded_by_id": str(self.superseded_by_id) if self.superseded_by_id else None,
            "embedding_model": self.embedding_model,
        }

    def content_at(self, moment: datetime | None) -> str:
        """What the note said at ``moment`` (system time): its wording before every correction a
        person made after it (``correct_note`` keeps each in the history), now when ``moment`` is
        None. A history step an erasure redacted holds no wording and gives none back."""
        content = self.content
        if moment is None:
            return content
        for step in reversed(self.evolution_history or []):
            changed = (step.get("changes") or {}).get("content") if isinstance(step, dict) else None
            at = parse_datetime(step.get("at") or "") if changed else None
            if at is not None and at > moment and isinstance(changed, list) and changed and changed[0]:
                content = changed[0]
        return content

    def append_history(self, event: str, changes: dict[str, list[Any]], **extra: Any) -> None:
        """Record one evolution step (field → [before, after]) on the note itself."""
        self.evolution_history = [
            *self.evolution_history,
            {"at": timezone.now().isoformat(), "event": event, "changes": changes, **extra},
        ]


class LinkType(models.TextChoices):
    SEMANTIC = "semantic", _("semantic (A-Mem)")
    SUPPORTS = "supports", _("supports")
    MENTIONS = "mentions", _("mentions")
    TEMPORAL_NEXT = "temporal_next", _("temporal next")
    CONTRADICTS = "contradicts", _("contradicts")
    SAME_MATTER = "same_matter", _("same matter")
    SUPERSEDES = "supersedes", _("supersedes")


class NoteLinkQuerySet(models.QuerySet["NoteLink"]):
    def visible_to(
        self, user, *, firm_ids: Sequence[int] | None = None, matter_ids: Sequence[int] | None = None
    ) -> "NoteLinkQuerySet":
        """A link is visible only when both of its notes are (ids as in ``Note.visible_to``)."""
        visible = Note.objects.visible_to(user, firm_ids=firm_ids, matter_ids=matter_ids)
        return self.filter(source__in=visible, target__in=visible)


class NoteLink(models.Model):
    """A typed, weighted edge between two notes of the same firm (graph memory)."""

    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="+", verbose_name=_("firm"))
    source = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="links_out", verbose_name=_("source"))
    target = models.ForeignKey(Note, on_delete=models.CASCADE, related_name="links_in", verbose_name=_("target"))
    link_type = models.CharField(max_length=20, choices=LinkType.choices, verbose_name=_("link type"))
    weight = models.FloatField(default=0.5, verbose_name=_("weight"))
    reason = models.CharField(max_length=300, blank=True, verbose_name=_("reason"))
    created_at = models.DateTimeField(auto_now_add=True, verbose_name=_("created at"))

    objects = NoteLinkQuerySet.as_manager()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["source", "target", "link_type"], name="notelink_unique_typed_edge"
            ),
            models.CheckConstraint(
                condition=~models.Q(source=models.F("target")), name="notelink_no_self_loop"
            ),
        ]
        verbose_name = _("note link")
        verbose_name_plural = _("note links")

    def __str__(self) -> str:
        # In words (the admin's page title): 「one note」 related how 「the other」.
        return f"「{str(self.source)[:30]}」 {self.get_link_type_display()} 「{str(self.target)[:30]}」"
