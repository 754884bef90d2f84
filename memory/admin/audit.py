"""Admin of the append-only audit log: entries in words (actor, object by its name, changes
field by field), searchable by event and object type in the reader's language; no one edits."""
from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext, gettext_lazy as _

from memory.admin.base import RelatedOnly, WalledAdmin
from memory.audit_display import (
    changes as audit_changes, extra_lines as audit_extra_lines, object_name, with_object_names,
)
from memory.labels import OBJECT_TYPES, actor_display, object_type_label
from memory.models import AuditEvent, AuditLog


def _lines(rows: list[tuple[str, str]]) -> str:
    """Labelled lines ("reason: …") as a definition list."""
    if not rows:
        return "—"
    return format_html("<dl class='audit-lines'>{}</dl>",
                       format_html_join("", "<dt>{}</dt><dd>{}</dd>", ((label, value) for label, value in rows)))


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
