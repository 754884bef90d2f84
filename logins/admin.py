"""Failed logins and lock-outs in admin: firm admins see (and may unlock) their own members."""
from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from logins.models import FailedLogin
from logins.services import unlock
from memory.admin.base import WalledAdmin


@admin.register(FailedLogin)
class FailedLoginAdmin(WalledAdmin):
    firm_admin_can_delete = True  # deleting the record is unlocking
    list_display = ("username_display", "ip_display", "failures_display", "locked_display", "time_display")
    list_filter = (("attempt_time", admin.DateFieldListFilter),)
    search_fields = ("username",)
    fields = readonly_fields = ("username_display", "ip_display", "failures_display", "locked_display",
                                "time_display", "path_display", "agent_display")
    actions = ["delete_selected"]

    @admin.display(description=_("username"), ordering="username")
    def username_display(self, row: FailedLogin) -> str:
        return row.username or ""

    @admin.display(description=_("IP address"), ordering="ip_address")
    def ip_display(self, row: FailedLogin) -> str:
        return row.ip_address or ""

    @admin.display(description=_("failed logins"), ordering="failures_since_start")
    def failures_display(self, row: FailedLogin) -> int:
        return row.failures_since_start

    @admin.display(description=_("locked out"), boolean=True)
    def locked_display(self, row: FailedLogin) -> bool:
        return row.failures_since_start >= settings.AXES_FAILURE_LIMIT

    @admin.display(description=_("last attempt"), ordering="attempt_time")
    def time_display(self, row: FailedLogin):
        return row.attempt_time

    @admin.display(description=_("page"))
    def path_display(self, row: FailedLogin) -> str:
        return row.path_info

    @admin.display(description=_("browser"))
    def agent_display(self, row: FailedLogin) -> str:
        return row.user_agent

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: FailedLogin) -> None:
        unlock(obj, actor=request.user)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet) -> None:
        for row in queryset:
            unlock(row, actor=request.user)
