"""Access tokens in admin: a firm admin sees their firm's tokens (never the secret, which is not
stored), when each was last used, and revokes them."""
from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _, ngettext

from connectors.models import AccessToken
from connectors.services import revoke_token
from memory.admin import WalledAdmin


@admin.register(AccessToken)
class AccessTokenAdmin(WalledAdmin):
    list_display = ("name", "display_prefix", "user", "firm", "scope", "expires_at", "last_used_at", "status_display")
    list_filter = ("scope", ("revoked_at", admin.EmptyFieldListFilter))
    search_fields = ("name", "prefix", "user__username")
    fields = readonly_fields = ("name", "display_prefix", "user", "firm", "scope", "matters_display", "language",
                                "created_at", "expires_at", "last_used_at", "revoked_at", "revoked_by", "status_display")
    actions = ["revoke_selected"]

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        return super().get_queryset(request).select_related("user", "firm", "revoked_by")

    @admin.display(description=_("token"))
    def display_prefix(self, token: AccessToken) -> str:
        return token.display_prefix

    @admin.display(description=_("status"))
    def status_display(self, token: AccessToken) -> str:
        return token.status_label()

    @admin.display(description=_("limited to matters"))
    def matters_display(self, token: AccessToken) -> str:
        matters = [f"{m.reference} {m.title}".strip() for m in token.matters.all()]
        return ", ".join(matters) or str(_("every matter the user is assigned to"))

    @admin.action(description=_("Revoke the selected tokens"))
    def revoke_selected(self, request: HttpRequest, queryset: QuerySet) -> None:
        count = 0
        for token in queryset.filter(revoked_at__isnull=True):
            revoke_token(token, actor=request.user, reason="revoked by a firm admin")
            count += 1
        self.message_user(request, ngettext("%(n)d token revoked.", "%(n)d tokens revoked.", count) % {"n": count},
                          messages.SUCCESS)

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def get_actions(self, request: HttpRequest):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions
