"""The wall every admin class of LegalMem stands behind, and the admin site's name.

``WalledAdmin`` gives a firm admin only the rows of the model's ``visible_to`` rule (anything
else is a 404); ``RelatedOnly`` keeps filter choices behind that wall. The admin modules of
``memory`` and of the apps (records, logins, connectors) build on them.
"""
from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import Http404, HttpRequest
from django.utils.translation import gettext_lazy as _

from memory.models import Firm

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



class RelatedOnly(admin.RelatedOnlyFieldListFilter):
    """Filter choices limited to rows the admin may already see (no other firm's names)."""
