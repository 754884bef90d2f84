"""Django admin for auditors.

Superusers (the platform's operators) see every firm. A firm admin with staff status sees
only what the one visibility rule (``visible_to``) gives them, restricted to the firms they
administer — so the ethical wall holds in admin too — and anything else is a 404. Every edit
or delete goes through ``memory.services`` and is itself audited.
"""
from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.db.models import Q, QuerySet
from django.http import Http404, HttpRequest
from django.template.loader import render_to_string
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext, gettext_lazy as _

from memory.models import (
    AuditLog,
    Conversation,
    Firm,
    Matter,
    Message,
    Note,
    NoteLink,
)
from memory.contradictions import open_contradictions, with_open_contradiction
from memory.audit_display import (
    changes as audit_changes, extra_lines as audit_extra_lines, object_name, with_object_names,
)
from memory.labels import (
    OBJECT_TYPES, actor_display, link_reason, object_type_label, source_key_label, speaker_label,
)
from memory.rules import explained, load_rules
from memory.models import AuditEvent
from memory.services.notes import NoteValidationError, correct_note, delete_note, restore_forgotten_note
from memory.timeline import note_timeline

# The product's name on every admin page, in the user's language (not "Django 管理").
admin.site.site_header = _("LegalMem audit")
admin.site.site_title = _("LegalMem audit")
admin.site.index_title = _("Memory, provenance and audit log")


def is_firm_admin(request: HttpRequest) -> bool:
    user = request.user
    return bool(
        user.is_active and user.is_staff and Firm.objects.administered_by(user).exists()
    )


class WalledAdmin(admin.ModelAdmin):
    """Rows come from the model's ``visible_to`` rule; other rows do not exist (404)."""

    firm_admin_can_change = False
    firm_admin_can_add = False
    firm_admin_can_delete = False

    def visible_rows(self, request: HttpRequest) -> QuerySet:
        """What a firm admin may see of this model. Override per model."""
        return self.model.objects.visible_to(request.user)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        queryset = super().get_queryset(request)
        if request.user.is_superuser:
            return queryset
        if not is_firm_admin(request):
            return queryset.none()
        return queryset.filter(pk__in=self.visible_rows(request).values("pk"))

    def _get_obj_does_not_exist_redirect(self, request, opts, object_id):
        raise Http404(_("Not found."))

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser or is_firm_admin(request)

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser or is_firm_admin(request)

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser or (self.firm_admin_can_change and is_firm_admin(request))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser or (self.firm_admin_can_add and is_firm_admin(request))

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser or (self.firm_admin_can_delete and is_firm_admin(request))


def _pretty_json(value: Any) -> str:
    """Raw data for operators only (extraction items and decisions); styled by admin.css, no
    ``style=`` attribute (the Content-Security-Policy forbids inline styles)."""
    return format_html("<pre class='raw-data'>{}</pre>", json.dumps(value, ensure_ascii=False, indent=2, default=str))


def _lines(rows: list[tuple[str, str]]) -> str:
    """Labelled lines ("reason: …") as a definition list."""
    if not rows:
        return "—"
    return format_html("<dl class='audit-lines'>{}</dl>",
                       format_html_join("", "<dt>{}</dt><dd>{}</dd>", ((label, value) for label, value in rows)))


class RelatedOnly(admin.RelatedOnlyFieldListFilter):
    """Filter choices limited to rows the admin may already see (no other firm's names)."""


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


class ObjectTypeFilter(admin.SimpleListFilter):
    """The audit list's object types by their names ("笔记", not "note")."""

    title = _("object type")
    parameter_name = "object_type"

    def lookups(self, request, model_admin):
        kinds = model_admin.get_queryset(request).order_by().values_list("object_type", flat=True).distinct()
        return sorted(((kind, object_type_label(kind)) for kind in kinds), key=lambda pair: pair[1])

    def queryset(self, request, queryset):
        return queryset.filter(object_type=self.value()) if self.value() else queryset


@admin.register(AuditLog)
class AuditLogAdmin(WalledAdmin):
    list_display = ("created_at", "actor_shown", "event_type", "object_type_shown", "object_shown", "firm")
    list_filter = ("event_type", ObjectTypeFilter, ("firm", RelatedOnly), ("created_at", admin.DateFieldListFilter))
    # Actor, object type and id, and the note's content before and after the change; an event
    # is also found by its label in the user's language (get_search_results).
    search_fields = ("actor_label", "object_type", "object_id", "before__content", "after__content")
    search_help_text = _("Search by actor, event (e.g. “forgotten”), object type (e.g. “note”), object id or note content.")
    date_hierarchy = "created_at"
    # One actor row (the name recorded at the time); times in the firm's time zone.
    fields = (
        "created_at",
        "actor_shown",
        "event_type",
        "object_type_shown",
        "object_shown",
        "firm",
        "matter",
        "changes_display",
        "extra_display",
    )
    readonly_fields = fields

    class Media:
        css = {"all": ("memory/admin.css",)}

    def get_search_results(self, request, queryset, search_term):
        """Also match events by their value or their translated label ("遗忘", "superseded")."""
        results, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        term = search_term.strip().lower()
        if not term:
            return results, may_have_duplicates
        events = [
            value for value, label in AuditEvent.choices
            if term in value.lower() or term in gettext(label).lower() or term in str(label).lower()
        ]
        if events:
            results = results | queryset.filter(event_type__in=events)
        kinds = [kind for kind in OBJECT_TYPES if term in object_type_label(kind).lower()]
        if kinds:  # an object type by its name in the reader's language ("笔记")
            results = results | queryset.filter(object_type__in=kinds)
        return results, may_have_duplicates

    @admin.display(description=_("actor"), ordering="actor_label")
    def actor_shown(self, entry: AuditLog) -> str:
        return actor_display(entry.actor_label)

    @admin.display(description=_("object type"), ordering="object_type")
    def object_type_shown(self, entry: AuditLog) -> str:
        return object_type_label(entry.object_type)

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return with_object_names(super().get_queryset(request))

    @admin.display(description=_("object"))
    def object_shown(self, entry: AuditLog) -> str:
        """The object by its name ("M-001 押金纠纷", a note's words); its id in the tooltip."""
        return format_html('<span title="{}">{}</span>', entry.object_id, object_name(entry))

    @admin.display(description=_("changes"))
    def changes_display(self, entry: AuditLog) -> str:
        """Field by field: what it was → what it became, in words and local time."""
        rows = audit_changes(entry)
        if not rows:
            return "—"
        head = format_html("<tr><th>{}</th><th>{}</th><th>{}</th></tr>",
                           gettext("field"), gettext("before"), gettext("after"))
        body = format_html_join("", "<tr><th scope='row'>{}</th><td><del>{}</del></td><td><ins>{}</ins></td></tr>",
                                ((row.label, row.before, row.after) for row in rows))
        return format_html("<table class='audit-changes'><thead>{}</thead><tbody>{}</tbody></table>", head, body)

    @admin.display(description=_("extra"))
    def extra_display(self, entry: AuditLog) -> str:
        return _lines(audit_extra_lines(entry))

    # Append-only for everyone, superusers included.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Conversation)
class ConversationAdmin(WalledAdmin):
    """Raw conversations are read by operators only; firm admins see notes' source messages inline."""

    list_display = ("title", "firm", "user", "matter", "created_at")
    readonly_fields = ("firm", "user", "matter", "title", "external_id", "created_at")

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser


@admin.register(Message)
class MessageAdmin(ConversationAdmin):
    list_display = ("conversation", "role", "speaker", "status", "said_at")
    readonly_fields = ("conversation", "firm", "role", "speaker", "content", "status", "external_id", "said_at",
                       "embedding_model")
    exclude = ("embedding",)  # the vector is for search, not for reading
    search_fields = ("content",)


# --- Write path -------------------------------------------------------------------------------
# Turn jobs, their routing decisions, working-memory consolidations and persona traits: read-only.
# Firm admins see their firm's jobs behind the wall with status and error; what was said (items,
# decisions, messages) stays with operators (superusers), like raw conversations.

from memory.models import Consolidation, PersonaTrait, RoutingDecision, TurnExtraction  # noqa: E402


class ReadOnlyWalledAdmin(WalledAdmin):
    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class RoutingDecisionInline(admin.TabularInline):
    model = RoutingDecision
    fk_name = "turn"
    extra = 0
    can_delete = False
    fields = ("item_index", "action", "category", "content", "reason", "note", "previous", "similarity")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser


@admin.register(TurnExtraction)
class TurnExtractionAdmin(ReadOnlyWalledAdmin):
    # Few, short columns: the list fits a 1280 px screen (the full row is one click away).
    list_display = ("id", "status", "attempts", "short_conversation", "short_error", "created_at")
    list_select_related = ("conversation",)
    list_filter = ("status", "engine", ("firm", RelatedOnly), ("created_at", admin.DateFieldListFilter))
    search_fields = ("last_error",)
    date_hierarchy = "created_at"
    public_fields = (
        "id", "firm", "conversation", "source_type", "status", "attempts", "last_error", "engine",
        "task_id", "next_attempt_at", "started_at", "finished_at", "created_at", "updated_at",
    )
    operator_fields = ("user_message", "assistant_message", "items_display", "rejected_display", "added_display", "decisions_display")
    inlines = [RoutingDecisionInline]

    class Media:
        css = {"all": ("memory/admin.css",)}

    def visible_rows(self, request: HttpRequest) -> QuerySet:
        return TurnExtraction.objects.visible_to(request.user)

    def get_fields(self, request, obj=None):
        return self.public_fields + (self.operator_fields if request.user.is_superuser else ())

    def get_readonly_fields(self, request, obj=None):
        return self.get_fields(request, obj)

    @admin.display(description=_("conversation"))
    def short_conversation(self, turn: TurnExtraction) -> str:
        return str(turn.conversation)[:30]

    @admin.display(description=_("error"))
    def short_error(self, turn: TurnExtraction) -> str:
        return (turn.last_error[:60] + ("…" if len(turn.last_error) > 60 else "")) or "—"

    @admin.display(description=_("items"))
    def items_display(self, turn: TurnExtraction) -> str:
        return _pretty_json(turn.items) if turn.items else "—"

    @admin.display(description=_("rejected items"))
    def rejected_display(self, turn: TurnExtraction) -> str:
        load_rules()  # each refusal with its rule's why, in the reader's language
        return _pretty_json([explained(reason) for reason in turn.rejected]) if turn.rejected else "—"

    @admin.display(description=_("added items"))
    def added_display(self, turn: TurnExtraction) -> str:
        return _pretty_json(turn.added) if turn.added else "—"

    @admin.display(description=_("decisions"))
    def decisions_display(self, turn: TurnExtraction) -> str:
        return _pretty_json(turn.decisions) if turn.decisions else "—"


@admin.register(Consolidation)
class ConsolidationAdmin(ReadOnlyWalledAdmin):
    list_display = ("id", "conversation", "engine", "created_at")
    fields = ("firm", "conversation", "engine", "items_display", "decisions_display", "created_at")
    readonly_fields = fields

    def visible_rows(self, request: HttpRequest) -> QuerySet:
        return Consolidation.objects.visible_to(request.user)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_superuser

    @admin.display(description=_("items"))
    def items_display(self, consolidation: Consolidation) -> str:
        return _pretty_json(consolidation.items) if consolidation.items else "—"

    @admin.display(description=_("decisions"))
    def decisions_display(self, consolidation: Consolidation) -> str:
        return _pretty_json(consolidation.decisions) if consolidation.decisions else "—"


@admin.register(PersonaTrait)
class PersonaTraitAdmin(ReadOnlyWalledAdmin):
    """A user's forming persona is as private as their profile notes: each sees only their own."""

    list_display = ("user", "short_content", "status", "strength", "evidence_count", "last_evidence_at")
    list_filter = ("status",)
    fields = ("firm", "user", "content", "category", "status", "strength", "base_confidence",
              "evidence_count", "last_evidence_at", "note", "conflicts_with", "decision", "evidence_display")
    readonly_fields = fields

    def visible_rows(self, request: HttpRequest) -> QuerySet:
        return PersonaTrait.objects.visible_to(request.user)

    @admin.display(description=_("content"))
    def short_content(self, trait: PersonaTrait) -> str:
        return trait.content[:80]

    @admin.display(description=_("evidence"))
    def evidence_display(self, trait: PersonaTrait) -> str:
        return format_html_join(
            "", "<p>{} · {:.2f} · {}</p>",
            ((e.said_at, e.confidence, e.content[:200]) for e in trait.evidence.all()),
        ) or "—"


from memory.models import LLMServerMode, LLMServerSpeed  # noqa: E402


class OperatorsReadOnlyAdmin(admin.ModelAdmin):
    """What the product learnt about the installation's LLM servers: read-only, operators
    (superusers) only — configuration of the installation, not data of a firm."""

    def has_module_permission(self, request: HttpRequest) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(LLMServerMode)
class LLMServerModeAdmin(OperatorsReadOnlyAdmin):
    """The JSON mode each server answers (probed once, remembered)."""

    list_display = ("model", "base_url", "json_mode", "probed_at", "updated_at")
    readonly_fields = ("base_url", "model", "json_mode", "probed_at", "last_error", "updated_at")


@admin.register(LLMServerSpeed)
class LLMServerSpeedAdmin(OperatorsReadOnlyAdmin):
    """How fast each server generates: the next request's budget is derived from it."""

    list_display = ("model", "base_url", "tokens_per_second", "samples", "measured_at")
    readonly_fields = ("base_url", "model", "tokens_per_second", "samples", "measured_at")
