"""The append-only audit log: every change to memory and to access, who did it, before and after.

Rows are never updated or deleted: the model refuses it, and a database trigger
(migration 0002) refuses it for anyone who bypasses the ORM.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from memory.labels import actor_display, object_type_label
from memory.models.tenancy import Firm, Matter, auditable_by


class AuditEvent(models.TextChoices):
    NOTE_CREATED = "note_created", _("note created")
    NOTE_UPDATED = "note_updated", _("note updated")
    NOTE_EVOLVED = "note_evolved", _("note evolved")
    NOTE_SUPERSEDED = "note_superseded", _("note superseded")
    NOTE_DELETED = "note_deleted", _("note deleted")
    NOTE_FORGOTTEN = "note_forgotten", _("note forgotten by its user")
    LINK_CREATED = "link_created", _("link created")
    LINK_DELETED = "link_deleted", _("link deleted")
    MATTER_CREATED = "matter_created", _("matter created")
    MATTER_UPDATED = "matter_updated", _("matter updated")
    MATTER_ASSIGNED = "matter_assigned", _("user assigned to matter")
    MATTER_UNASSIGNED = "matter_unassigned", _("user removed from matter")
    MEMBERSHIP_CHANGED = "membership_changed", _("membership changed")
    MEMBERSHIP_REMOVED = "membership_removed", _("membership removed")
    FIRM_CREATED = "firm_created", _("firm created")
    JOB_FAILED = "job_failed", _("background job failed")
    LOGIN_LOCKED_OUT = "login_locked_out", _("login locked out")
    LOGIN_UNLOCKED = "login_unlocked", _("login unlocked")
    # --- records (docs/records.md) ---
    FIRM_UPDATED = "firm_updated", _("firm settings changed")
    MATTER_CLOSED = "matter_closed", _("matter closed")
    MATTER_REOPENED = "matter_reopened", _("matter reopened")
    LEGAL_HOLD_SET = "legal_hold_set", _("legal hold set")
    LEGAL_HOLD_LIFTED = "legal_hold_lifted", _("legal hold lifted")
    ERASED = "erased", _("erased (tombstone)")
    MATTER_EXPORTED = "matter_exported", _("matter exported")
    MATTER_IMPORTED = "matter_imported", _("matter imported")
    # --- re-embedding (docs/operations.md, "Changing the embedding model") ---
    REEMBED_STARTED = "reembed_started", _("re-embedding started")
    REEMBED_SWITCHED = "reembed_switched", _("switched to new embeddings")
    REEMBED_OLD_DROPPED = "reembed_old_dropped", _("old embeddings dropped")
    REEMBED_ABORTED = "reembed_aborted", _("re-embedding aborted")
    # --- personal access tokens (connectors/, docs/connectors.md) ---
    TOKEN_CREATED = "token_created", _("access token created")
    TOKEN_REVOKED = "token_revoked", _("access token revoked")
    TOKEN_USED = "token_used", _("access token used")
    TOKEN_REFUSED = "token_refused", _("access token refused")
    TOKEN_BLOCK_LIFTED = "token_block_lifted", _("access token block lifted")
    # --- a matter's documents (docs/documents.md) ---
    DOCUMENT_UPLOADED = "document_uploaded", _("document uploaded")
    DOCUMENT_VIEWED = "document_viewed", _("document viewed")
    DOCUMENT_DOWNLOADED = "document_downloaded", _("document downloaded")
    DOCUMENT_INDEXED = "document_indexed", _("document indexed")
    DOCUMENT_FAILED = "document_failed", _("document failed")
    DOCUMENT_RESUMED = "document_resumed", _("document taken over from a stopped worker")
    # --- answers (docs/citations.md) ---
    ANSWER_CHECKED = "answer_checked", _("answer sources checked")
    CONVERSATION_EXPORTED = "conversation_exported", _("conversation exported")
    # --- a matter's chronology (docs/chronology.md) ---
    CHRONOLOGY_EXPORTED = "chronology_exported", _("matter chronology exported")


class AuditLogQuerySet(models.QuerySet["AuditLog"]):
    def visible_to(self, user) -> "AuditLogQuerySet":
        """Firm admins read their firm's log, and still only behind the ethical wall:
        entries about a matter need an assignment, private entries (someone's profile) need
        to be one's own."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(
            auditable_by(user) & (models.Q(private_to__isnull=True) | models.Q(private_to=user))
        )


class AuditLog(models.Model):
    """One recorded change. Append-only."""

    firm = models.ForeignKey(
        Firm, on_delete=models.DO_NOTHING, db_constraint=False, null=True, related_name="+",
        verbose_name=_("firm"),
    )
    matter = models.ForeignKey(
        Matter, on_delete=models.DO_NOTHING, db_constraint=False, null=True, blank=True,
        related_name="+",
        verbose_name=_("matter"),
    )
    private_to = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, null=True,
        blank=True, related_name="+",
        help_text=_("Set when the object is visible to one user only (their profile notes)."),
        verbose_name=_("private to"),
    )
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.DO_NOTHING, db_constraint=False, null=True,
        blank=True, related_name="+",
        verbose_name=_("actor"),
    )
    actor_label = models.CharField(
        _("actor"), max_length=200, help_text=_("The user's name, or system:<component>.")
    )
    event_type = models.CharField(_("event"), max_length=40, choices=AuditEvent.choices)
    object_type = models.CharField(_("object type"), max_length=40)
    object_id = models.CharField(_("object id"), max_length=64)
    before = models.JSONField(null=True, blank=True, verbose_name=_("before"))
    after = models.JSONField(null=True, blank=True, verbose_name=_("after"))
    extra = models.JSONField(default=dict, blank=True, verbose_name=_("extra"))
    created_at = models.DateTimeField(default=timezone.now, db_index=True, verbose_name=_("created at"))

    objects = AuditLogQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["object_type", "object_id"], name="audit_object_idx"),
            # the newest erasure, read by every search (memory.erasure_hooks.LATEST_ERASURE_SQL)
            models.Index(fields=["id"], condition=models.Q(event_type="erased"), name="audit_erased_idx"),
        ]
        verbose_name = _("audit log entry")
        verbose_name_plural = _("audit log")

    def __str__(self) -> str:
        # In the firm's time zone (settings.TIME_ZONE), like every other time the admin shows.
        # Actor and object type in words (memory/labels.py); a numbered object's number after its
        # type, never a raw UUID (the entry's page names the object: memory.audit_display.object_name).
        number = f" #{self.object_id}" if self.object_id.isdigit() else ""
        return (f"{timezone.localtime(self.created_at):%Y-%m-%d %H:%M:%S} {actor_display(self.actor_label)} "
                f"{self.get_event_type_display()} {object_type_label(self.object_type)}{number}")

    def save(self, *args, **kwargs) -> None:
        if self.pk is not None:
            raise PermissionError("The audit log is append-only: entries cannot be changed.")
        super().save(*args, **kwargs)

    def delete(self, *args, **kwargs):
        raise PermissionError("The audit log is append-only: entries cannot be deleted.")
