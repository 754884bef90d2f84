"""Admin of the write path: turn jobs with their routing decisions, working-memory
consolidations and persona traits, all read-only."""
from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext_lazy as _

from memory.admin.base import RelatedOnly, WalledAdmin
from memory.models import Consolidation, PersonaTrait, RoutingDecision, TurnExtraction
from memory.rules import explained, load_rules


# --- Write path -------------------------------------------------------------------------------
# Turn jobs, their routing decisions, working-memory consolidations and persona traits: read-only.
# Firm admins see their firm's jobs behind the wall with status and error; what was said (items,
# decisions, messages) stays with operators (superusers), like raw conversations.


def _pretty_json(value: Any) -> str:
    """Raw data for operators only (extraction items and decisions); styled by admin.css, no
    ``style=`` attribute (the Content-Security-Policy forbids inline styles)."""
    return format_html("<pre class='raw-data'>{}</pre>", json.dumps(value, ensure_ascii=False, indent=2, default=str))


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
