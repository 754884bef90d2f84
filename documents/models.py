"""A matter's documents: the original file (content-addressed), its pages and its chunks.

A document belongs to exactly one matter and is visible to exactly the users assigned to it
(``Document.objects.visible_to``). Pages hold the extracted text of each page; chunks are
passages of one page, with their character offsets in that page's text, their keyword terms and
their embedding, so every derived row points to document, page and offsets (docs/documents.md).
"""
from __future__ import annotations

from collections.abc import Sequence

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.utils.translation import gettext, gettext_lazy as _
from pgvector.django import VectorField

from memory.models.conversations import SEARCH_CONFIG
from memory.models.tenancy import Firm, Matter


class DocumentQuerySet(models.QuerySet["Document"]):
    def visible_to(self, user, *, matter_ids: Sequence[int] | None = None) -> "DocumentQuerySet":
        """A document is seen by exactly the users assigned to its matter (the ethical wall).
        ``matter_ids``: the user's assigned matters (``Matter.objects.assigned_to``) when the
        caller has just read them, as literals instead of the subquery (a search's hot path);
        only ever pass what that returned."""
        if not user.is_authenticated:
            return self.none()
        if matter_ids is not None:
            return self.filter(matter_id__in=list(matter_ids))
        return self.filter(matter__in=Matter.objects.assigned_to(user))


class Document(models.Model):
    """One uploaded file of a matter; the bytes live once per hash under the data folder."""

    class Status(models.TextChoices):
        QUEUED = "queued", _("queued")
        EXTRACTING = "extracting", _("extracting")
        OCR = "ocr", _("OCR")
        INDEXED = "indexed", _("indexed")
        FAILED = "failed", _("failed")

    class Kind(models.TextChoices):
        PDF = "pdf", _("PDF")
        IMAGE = "image", _("image")
        DOCX = "docx", _("Word document")
        EMAIL = "email", _("e-mail")
        TEXT = "text", _("text")

    firm = models.ForeignKey(Firm, on_delete=models.PROTECT, related_name="documents", verbose_name=_("firm"))
    matter = models.ForeignKey(Matter, on_delete=models.PROTECT, related_name="documents", verbose_name=_("matter"))
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, null=True, blank=True, related_name="+",
        verbose_name=_("uploaded by"),
    )
    parent = models.ForeignKey(
        "self", on_delete=models.CASCADE, null=True, blank=True, related_name="attachments",
        verbose_name=_("attached to"), help_text=_("The e-mail this file was attached to."),
    )
    filename = models.CharField(_("file name"), max_length=255)
    title = models.CharField(_("title"), max_length=255)
    kind = models.CharField(_("kind"), max_length=10, choices=Kind.choices, blank=True)
    sha256 = models.CharField(_("SHA-256"), max_length=64, db_index=True)
    size_bytes = models.BigIntegerField(_("size (bytes)"))
    status = models.CharField(_("status"), max_length=12, choices=Status.choices, default=Status.QUEUED)
    error = models.CharField(_("error"), max_length=500, blank=True)
    attempts = models.PositiveIntegerField(_("attempts"), default=0)
    page_count = models.PositiveIntegerField(_("pages"), default=0)
    ocr_pages = models.PositiveIntegerField(_("pages read by OCR"), default=0)
    headers = models.JSONField(_("e-mail headers"), default=dict, blank=True)
    uploaded_at = models.DateTimeField(_("uploaded at"), auto_now_add=True)
    indexed_at = models.DateTimeField(_("indexed at"), null=True, blank=True)
    # The worker reading it (extracting / OCR): who, since when, and its last sign of life, so
    # that another worker takes a document over from one that died (documents.takeover).
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    worker_host = models.CharField(_("worker host"), max_length=255, blank=True)
    worker_pid = models.PositiveIntegerField(_("worker pid"), null=True, blank=True)
    heartbeat_at = models.DateTimeField(_("heartbeat at"), null=True, blank=True)

    objects = DocumentQuerySet.as_manager()

    class Meta:
        ordering = ["-uploaded_at", "-id"]
        indexes = [models.Index(fields=["matter", "-uploaded_at"], name="document_matter_uploaded")]
        verbose_name = _("document")
        verbose_name_plural = _("documents")

    def __str__(self) -> str:
        return self.title

    @property
    def is_being_read(self) -> bool:
        """A worker holds it (extracting or OCR)."""
        return self.status in (self.Status.EXTRACTING, self.Status.OCR)

    def citation(self, page: int) -> str:
        """How an answer cites a page of it, in the reader's language: 《房屋租赁合同》第 3 页
        ("Lease contract", page 3 in English)."""
        return gettext("《%(title)s》第 %(page)s 页") % {"title": self.title, "page": page}

    @property
    def can_retry(self) -> bool:
        return self.status == self.Status.FAILED


class DocumentPage(models.Model):
    """The extracted text of one page (1-based); DOCX, e-mail and text files have one page."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="pages", verbose_name=_("document"))
    number = models.PositiveIntegerField(_("page"))
    text = models.TextField(_("text"), blank=True)
    by_ocr = models.BooleanField(_("read by OCR"), default=False)

    class Meta:
        ordering = ["document", "number"]
        constraints = [models.UniqueConstraint(fields=["document", "number"], name="document_page_unique")]
        verbose_name = _("document page")
        verbose_name_plural = _("document pages")

    def __str__(self) -> str:
        return self.document.citation(self.number)


class DocumentChunkQuerySet(models.QuerySet["DocumentChunk"]):
    def visible_to(self, user, *, matter_ids: Sequence[int] | None = None) -> "DocumentChunkQuerySet":
        """A chunk is seen by exactly the users who see its document (``matter_ids`` as there)."""
        return self.filter(document__in=Document.objects.visible_to(user, matter_ids=matter_ids))


class DocumentChunk(models.Model):
    """A passage of one page: ``page.text[start:end]``, cut at paragraphs and headings."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="chunks", verbose_name=_("document"))
    page = models.ForeignKey(DocumentPage, on_delete=models.CASCADE, related_name="chunks", verbose_name=_("page"))
    matter = models.ForeignKey(Matter, on_delete=models.PROTECT, related_name="+", verbose_name=_("matter"))
    ordinal = models.PositiveIntegerField(_("position in the document"))
    start = models.PositiveIntegerField(_("start offset in the page"))
    end = models.PositiveIntegerField(_("end offset in the page"))
    heading = models.CharField(_("heading"), max_length=300, blank=True)
    text = models.TextField(_("text"))
    search_text = models.TextField(_("search text"), blank=True, editable=False)
    search_vector = models.GeneratedField(
        expression=SearchVector("search_text", config=SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
        verbose_name=_("search vector"),
    )
    embedding = VectorField(dimensions=settings.NOTE_EMBEDDING_DIMENSIONS, null=True, blank=True, verbose_name=_("embedding"))
    embedding_model = models.CharField(max_length=100, blank=True, verbose_name=_("embedding model"))

    objects = DocumentChunkQuerySet.as_manager()

    class Meta:
        ordering = ["document", "ordinal"]
        indexes = [
            GinIndex(fields=["search_vector"], name="document_chunk_search_gin"),
            models.Index(fields=["matter"], include=["id", "embedding"], name="document_chunk_matter_vectors"),
        ]
        verbose_name = _("document chunk")
        verbose_name_plural = _("document chunks")

    def __str__(self) -> str:
        return f"{self.document.citation(self.page.number)} [{self.start}:{self.end}]"
