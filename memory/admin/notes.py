"""Admin of notes and the links between them: the auditors' main page (provenance, history,
contradictions), where corrections, restores and deletes go through ``memory.services.notes``."""
from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import HttpRequest
from django.template.loader import render_to_string
from django.utils.html import format_html
from django.utils.translation import gettext, gettext_lazy as _

from memory.admin.base import RelatedOnly, WalledAdmin
from memory.contradictions import open_contradictions, with_open_contradiction
from memory.labels import actor_display, link_reason, source_key_label, speaker_label
from memory.models import AuditLog, Firm, Matter, Note, NoteLink
from memory.services.notes import NoteValidationError, correct_note, delete_note, restore_forgotten_note
from memory.timeline import note_timeline


@admin.register(Note)
class NoteAdmin(WalledAdmin):
    change_form_template = "admin/memory/note/change_form.html"
    firm_admin_can_change = True
    firm_admin_can_delete = True
    # Few, short columns so the list fits a 1400 px screen beside the filters; importance,
    # confidence and provenance are on the note's page. Operators (several firms) see the firm.
    list_display = ("short_content", "memory_scope", "category", "matter", "status_shown", "stored_at")
    list_filter = (
        ("firm", RelatedOnly),
        "memory_scope",
        "category",
        ("matter", RelatedOnly),
        "source_type",
        "status",
        ("stored_at", admin.DateFieldListFilter),
        ("said_at", admin.DateFieldListFilter),
    )
    search_fields = ("content", "context", "source_id", "subject", "speaker")
    date_hierarchy = "stored_at"
    list_select_related = ("firm", "matter")
    fieldsets = (
        (
            _("Knowledge"),
            {
                "fields": (
                    "content",
                    "memory_scope",
                    "category",
                    "memory_type",
                    "keywords",
                    "tags",
                    "context",
                    "importance",
                    "confidence",
                    "subject",
                )
            },
        ),
        (
            _("Provenance"),
            {
                "fields": (
                    "firm",
                    "matter",
                    "owner",
                    "conversation",
                    "source_type",
                    "source_shown",
                    "speaker",
                    "said_at",
                    "stored_at",
                    "updated_at",
                )
            },
        ),
        # What auditors quote and operators check, one click away (a closed <details>).
        (_("Technical details"), {"classes": ("collapse",), "fields": ("note_id", "source_id", "embedding_model")}),
        (
            _("Validity and history"),
            {
                "fields": (
                    "status",
                    "valid_from",
                    "valid_to",
                    "superseded_by",
                    "mention_count",
                    "evolution_history_display",
                )
            },
        ),
    )
    readonly_fields = (
        "note_id",
        "firm",
        "matter",
        "owner",
        "conversation",
        "source_type",
        "source_id",
        "source_shown",
        "speaker",
        "said_at",
        "stored_at",
        "updated_at",
        "embedding_model",
        "status",
        "valid_from",
        "valid_to",
        "superseded_by",
        "mention_count",
        "evolution_history_display",
    )

    def visible_rows(self, request: HttpRequest) -> QuerySet:
        return Note.objects.visible_to(request.user).filter(
            firm__in=Firm.objects.administered_by(request.user)
        )

    def get_list_display(self, request: HttpRequest):
        return (*self.list_display, "firm") if request.user.is_superuser else self.list_display

    def _readable_notes(self, request: HttpRequest) -> QuerySet:
        """The notes this auditor may read: every note for an operator, else ``visible_rows``."""
        return Note.objects.all() if request.user.is_superuser else self.visible_rows(request)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return with_open_contradiction(super().get_queryset(request), visible=self._readable_notes(request))

    @admin.display(description=_("content"))
    def short_content(self, note: Note) -> str:
        return note.content[:80]

    @admin.display(description=_("status"), ordering="status")
    def status_shown(self, note: Note) -> str:
        """The status, and whether another current note of the same slot says otherwise."""
        if getattr(note, "in_contradiction", False):
            return format_html("{} <span class='conflict'>{}</span>", note.get_status_display(), gettext("contradiction"))
        return note.get_status_display()

    @admin.display(description=_("note ID"))
    def note_id(self, note: Note) -> str:
        """The internal id, labelled: auditors quote it (audit entries name notes by it)."""
        return str(note.pk)

    @admin.display(description=_("source"))
    def source_shown(self, note: Note) -> str:
        """Where it came from in words ("conversation turn #87"), not the key ``turn:87``."""
        return source_key_label(note.source_id) if note.source_id else "—"

    class Media:
        css = {"all": ("memory/timeline.css", "memory/admin.css")}

    @admin.display(description=_("evolution history"))
    def evolution_history_display(self, note: Note) -> str:
        """The history as a readable timeline of what changed (the raw JSON stays in the audit log)."""
        return render_to_string("memory/timeline.html", {"timeline": note_timeline(note)})

    def change_view(self, request, object_id, form_url="", extra_context=None):
        """Provenance panels (source messages, links, audit trail) filtered for this request's user."""
        note = self.get_object(request, object_id)
        if note is not None:
            extra_context = {**(extra_context or {}), **self._provenance_context(request, note)}
        return super().change_view(request, object_id, form_url, extra_context)

    def history_view(self, request, object_id, extra_context=None):
        """The note's history: its evolution timeline and its audit entries (behind the wall),
        then any admin edits Django logged."""
        note = self.get_object(request, object_id)
        if note is not None:
            extra_context = {
                **(extra_context or {}),
                "timeline": note_timeline(note, viewer=request.user),
                "audit_trail": self._provenance_context(request, note)["audit_trail"],
            }
        return super().history_view(request, object_id, extra_context)

    def _provenance_context(self, request, note: Note) -> dict[str, Any]:
        user = request.user
        messages = note.source_messages().select_related("conversation")
        links = (NoteLink.objects.filter(source=note) | NoteLink.objects.filter(target=note)).select_related(
            "source", "target"
        )
        audit = AuditLog.objects.filter(object_type="note", object_id=str(note.pk))
        if not user.is_superuser:
            firms = Firm.objects.administered_by(user)
            messages = messages.filter(firm__in=firms).filter(
                Q(conversation__matter__isnull=True) | Q(conversation__matter__in=Matter.objects.assigned_to(user))
            )
            links = links & NoteLink.objects.visible_to(user)
            audit = audit & AuditLog.objects.visible_to(user)
        trail = list(audit.order_by("created_at", "id"))
        for entry in trail:
            entry.actor_shown = actor_display(entry.actor_label)
            reason = entry.extra.get("reason") if isinstance(entry.extra, dict) else None
            entry.reason_shown = link_reason(reason) if isinstance(reason, str) and reason else "—"
        sources = list(messages)
        for message in sources:
            message.speaker_shown = speaker_label(message.speaker) if message.speaker else ""
        return {
            "contradictions": open_contradictions([note.pk], visible=self._readable_notes(request)).get(note.pk, []),
            "source_messages": sources,
            "note_links": [
                (link, link.target if link.source_id == note.pk else link.source, link_reason(link.reason))
                for link in links
            ],
            "audit_trail": trail,
        }

    def save_model(self, request, obj: Note, form, change: bool) -> None:
        original = Note.objects.get(pk=obj.pk)
        changes = {name: form.cleaned_data[name] for name in form.changed_data}
        correct_note(original, changes, actor=request.user, reason="admin correction")

    actions = ["restore_forgotten"]

    @admin.action(description=_("Restore forgotten notes (they are recalled again)"), permissions=["change"])
    def restore_forgotten(self, request, queryset: QuerySet) -> None:
        restored = 0
        for note in queryset.filter(status=Note.Status.FORGOTTEN):
            try:
                restore_forgotten_note(note, actor=request.user, reason="restored in admin")
            except NoteValidationError:
                continue
            restored += 1
        self.message_user(request, gettext("%(n)d note(s) restored.") % {"n": restored})

    def delete_model(self, request, obj: Note) -> None:
        delete_note(obj, actor=request.user, reason="deleted in admin")

    def delete_queryset(self, request, queryset: QuerySet) -> None:
        for note in queryset:
            delete_note(note, actor=request.user, reason="deleted in admin")


@admin.register(NoteLink)
class NoteLinkAdmin(WalledAdmin):
    list_display = ("source", "link_type", "target", "weight", "created_at")
    list_filter = ("link_type", ("firm", RelatedOnly))
    fields = ("firm", "source", "target", "link_type", "weight", "reason_shown", "created_at")
    readonly_fields = fields

    @admin.display(description=_("reason"))
    def reason_shown(self, link: NoteLink) -> str:
        """Why the notes are linked, in words ("similar in meaning", not "nearest neighbour, cosine")."""
        return link_reason(link.reason) or "—"

    def visible_rows(self, request: HttpRequest) -> QuerySet:
        return NoteLink.objects.visible_to(request.user).filter(
            firm__in=Firm.objects.administered_by(request.user)
        )
