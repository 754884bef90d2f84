"""Admin of what the product learnt about the installation's LLM servers (JSON mode, speed):
operators only, read-only."""
from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from memory.models import LLMServerMode, LLMServerSpeed


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
