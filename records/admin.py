"""Records in admin (docs/records.md): firm admins erase matters and users' data after a
confirmation page naming the counts, close and reopen matters, set and lift legal holds, and
download a matter's export. Each action calls the records services, which audit it.

The admin of firms, memberships and matters (``memory``'s models) is registered here, with
these actions; the rest of memory's admin is in ``memory/admin/``."""
from __future__ import annotations

from typing import Any

from django.contrib import admin, messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.translation import gettext, gettext_lazy as _

from django.db.models import QuerySet

from memory.admin.base import RelatedOnly, WalledAdmin, is_firm_admin
from memory.labels import format_counts
from memory.models import Firm, Matter, MatterAssignment, Membership
from memory.services.tenancy import assign_user, create_matter, unassign_user, update_matter
from records.erasure import ErasureError, Unit, compact_and_verify, erase, matter_unit, preview, user_unit
from records.services.retention import RecordsError, close_matter, lift_legal_hold, reopen_matter, set_legal_hold
from records.views import export_response

RECORDS_READONLY = ("closed_at", "legal_hold", "legal_hold_reason", "erased_at", "export_links")


def _confirm(modeladmin, request: HttpRequest, queryset, *, action: str, title: str, explanation: str,
             submit_label: str, units: list[tuple[Any, Unit | None]], show_counts: bool) -> HttpResponse:
    """The intermediate page: what each selected row holds (or why it cannot go), and a reason."""
    items, can_proceed = [], False
    for row, unit in units:
        item = {"label": str(row), "counts": "", "problem": ""}
        try:
            if unit is not None and show_counts:
                result = preview(unit)
                item["counts"] = result.message if result.already_erased else format_counts(result.counts)
        except ErasureError as exc:
            item["problem"] = str(exc)
        can_proceed = can_proceed or not item["problem"]
        items.append(item)
    context = {
        **modeladmin.admin_site.each_context(request), "opts": modeladmin.model._meta, "title": title,
        "explanation": explanation, "items": items, "can_proceed": can_proceed, "action": action,
        "selected": [str(row.pk) for row, _ in units], "submit_label": submit_label,
    }
    return render(request, "admin/memory/records_confirm.html", context)


def _erase_all(modeladmin, request, units: list[tuple[Any, Unit]]) -> None:
    reason = request.POST.get("reason", "")
    for row, unit in units:
        try:
            result = erase(unit, actor=request.user, reason=reason)
        except ErasureError as exc:
            modeladmin.message_user(request, f"{row}: {exc}", messages.ERROR)
            continue
        modeladmin.message_user(request, result.message, messages.WARNING if result.already_erased else messages.SUCCESS)
        verdict = compact_and_verify(result, folders=[])  # the database; the command also scans the files
        if verdict is not None:
            modeladmin.message_user(request, " ".join(verdict.lines()),
                                    messages.SUCCESS if verdict.clean else messages.ERROR)


class MatterRecordsAdmin:
    """Mixed into MatterAdmin (below)."""

    actions = ["erase_matters", "close_matters", "reopen_matters", "place_legal_hold", "lift_legal_holds"]

    @admin.action(description=_("Erase selected matters for good…"))
    def erase_matters(self, request: HttpRequest, queryset) -> HttpResponse | None:
        units = [(matter, matter_unit(matter)) for matter in queryset.select_related("firm")]
        if request.POST.get("confirm") == "yes":
            _erase_all(self, request, units)
            return None
        return _confirm(self, request, queryset, action="erase_matters", title=gettext("Erase matters"),
                        explanation=gettext("Everything these matters hold is erased for good: notes, links, "
                                            "conversations, messages, persona evidence and search data. The audit "
                                            "log keeps a tombstone with the counts and your reason."),
                        submit_label=gettext("Yes, erase"), units=units, show_counts=True)

    @admin.action(description=_("Place selected matters on legal hold…"))
    def place_legal_hold(self, request: HttpRequest, queryset) -> HttpResponse | None:
        if request.POST.get("confirm") == "yes":
            for matter in queryset:
                try:
                    set_legal_hold(matter, actor=request.user, reason=request.POST.get("reason", ""))
                except RecordsError as exc:
                    self.message_user(request, f"{matter}: {exc}", messages.ERROR)
            return None
        return _confirm(self, request, queryset, action="place_legal_hold", title=gettext("Legal hold"),
                        explanation=gettext("Matters on legal hold are neither purged nor erased until the hold "
                                            "is lifted."),
                        submit_label=gettext("Place on hold"), units=[(m, None) for m in queryset],
                        show_counts=False)

    @admin.action(description=_("Lift legal hold"))
    def lift_legal_holds(self, request: HttpRequest, queryset) -> None:
        for matter in queryset:
            self._apply(request, matter, lambda m: lift_legal_hold(m, actor=request.user))

    @admin.action(description=_("Close selected matters (starts the retention period)"))
    def close_matters(self, request: HttpRequest, queryset) -> None:
        for matter in queryset:
            self._apply(request, matter, lambda m: close_matter(m, actor=request.user))

    @admin.action(description=_("Reopen selected matters"))
    def reopen_matters(self, request: HttpRequest, queryset) -> None:
        for matter in queryset:
            self._apply(request, matter, lambda m: reopen_matter(m, actor=request.user))

    def _apply(self, request, matter: Matter, change) -> None:
        try:
            change(matter)
        except RecordsError as exc:
            self.message_user(request, f"{matter}: {exc}", messages.ERROR)

    @admin.display(description=_("export"))
    def export_links(self, matter: Matter) -> str:
        if matter.pk is None or matter.erased_at is not None:
            return "—"
        url = reverse("admin:memory_matter_export", args=[matter.pk])
        return format_html('<a href="{}?format=json">JSON</a> · <a href="{}?format=markdown">Markdown</a>', url, url)

    def get_urls(self):
        return [
            path("<int:matter_id>/export/", self.admin_site.admin_view(self.export_view), name="memory_matter_export"),
            *super().get_urls(),
        ]

    def export_view(self, request: HttpRequest, matter_id: int) -> HttpResponse:
        """Behind the ethical wall like any other export: assigned firm admins only, else 404."""
        from records.services.matter_transfer import FORMATS, exportable_matter

        fmt = request.GET.get("format", "json")
        try:
            matter = exportable_matter(request.user, matter_id)
        except Matter.DoesNotExist:
            raise Http404(gettext("Not found.")) from None
        if fmt not in FORMATS or not self.get_queryset(request).filter(pk=matter.pk).exists():
            raise Http404(gettext("Not found."))
        return export_response(matter, actor=request.user, fmt=fmt)


class MembershipRecordsAdmin:
    """Mixed into MembershipAdmin: erase a member's data in that firm."""

    actions = ["erase_member_data"]

    @admin.action(description=_("Erase these users' data in the firm…"))
    def erase_member_data(self, request: HttpRequest, queryset) -> HttpResponse | None:
        units = [(membership, user_unit(membership.firm, membership.user))
                 for membership in queryset.select_related("firm", "user")]
        if request.POST.get("confirm") == "yes":
            _erase_all(self, request, units)
            return None
        return _confirm(self, request, queryset, action="erase_member_data", title=gettext("Erase users' data"),
                        explanation=gettext("The users' conversations, messages, private notes, notes written "
                                            "from their conversations and persona are erased for good; their "
                                            "accounts stay. The audit log keeps a tombstone."),
                        submit_label=gettext("Yes, erase"), units=units, show_counts=True)


class FirmRecordsAdmin:
    """Mixed into FirmAdmin: a firm admin sets the retention period (audited); name and slug
    stay the operators'."""

    firm_admin_can_change = True

    def get_readonly_fields(self, request: HttpRequest, obj=None):
        return () if request.user.is_superuser else ("name", "slug")

    def save_model(self, request: HttpRequest, obj, form, change: bool) -> None:
        from memory.models import Firm
        from records.services.retention import set_retention

        if not change:
            super().save_model(request, obj, form, change)
            return
        if set(form.changed_data) - {"retention_days"}:
            stored = Firm.objects.get(pk=obj.pk)
            obj.retention_days = stored.retention_days  # saved next, through the audited service
            super().save_model(request, obj, form, change)
        if "retention_days" in form.changed_data:
            set_retention(obj, form.cleaned_data["retention_days"], actor=request.user)


# --- the admin of firms, memberships and matters: memory's models with the records actions ---


@admin.register(Firm)
class FirmAdmin(FirmRecordsAdmin, WalledAdmin):
    list_display = ("name", "slug", "retention_days", "created_at")
    search_fields = ("name", "slug")

    def visible_rows(self, request: HttpRequest) -> QuerySet:
        return Firm.objects.administered_by(request.user)


@admin.register(Membership)
class MembershipAdmin(MembershipRecordsAdmin, WalledAdmin):
    list_display = ("user", "firm", "role", "created_at")
    list_filter = ("role", ("firm", RelatedOnly))

    def visible_rows(self, request: HttpRequest) -> QuerySet:
        return Membership.objects.filter(firm__in=Firm.objects.administered_by(request.user))


class AssignmentInline(admin.TabularInline):
    model = MatterAssignment
    fk_name = "matter"
    extra = 1
    fields = ("user", "assigned_by", "assigned_at")
    readonly_fields = ("assigned_by", "assigned_at")

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "user" and not request.user.is_superuser:
            from django.contrib.auth import get_user_model

            firms = Firm.objects.administered_by(request.user)
            kwargs["queryset"] = get_user_model().objects.filter(memberships__firm__in=firms).distinct()
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def has_add_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser or is_firm_admin(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser or is_firm_admin(request)

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser or is_firm_admin(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.is_superuser or is_firm_admin(request)


@admin.register(Matter)
class MatterAdmin(MatterRecordsAdmin, WalledAdmin):
    """Firm admins manage their firm's matters and who is behind each ethical wall."""

    firm_admin_can_change = True
    firm_admin_can_add = True
    # Few, short columns: the list fits a 1280 px screen beside its filter (the full row is one
    # click away); operators (several firms) also see the firm.
    list_display = ("reference", "short_title", "status", "legal_hold", "closed_at")
    list_display_links = ("reference", "short_title")
    list_filter = ("status", ("firm", RelatedOnly))
    search_fields = ("title", "reference")
    inlines = [AssignmentInline]

    def get_list_display(self, request: HttpRequest):
        return (*self.list_display, "firm") if request.user.is_superuser else self.list_display

    @admin.display(description=_("title"), ordering="title")
    def short_title(self, matter: Matter) -> str:
        return matter.title if len(matter.title) <= 40 else matter.title[:40] + "…"

    def visible_rows(self, request: HttpRequest) -> QuerySet:
        return Matter.objects.manageable_by(request.user)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "firm" and not request.user.is_superuser:
            kwargs["queryset"] = Firm.objects.administered_by(request.user)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_readonly_fields(self, request, obj=None):
        return ("firm", *RECORDS_READONLY) if obj is not None else RECORDS_READONLY

    def save_model(self, request, obj: Matter, form, change: bool) -> None:
        if change:
            changes = {name: form.cleaned_data[name] for name in form.changed_data}
            if changes:
                update_matter(Matter.objects.get(pk=obj.pk), changes, actor=request.user)
            return
        created = create_matter(
            firm=obj.firm,
            title=obj.title,
            reference=obj.reference,
            description=obj.description,
            actor=request.user,
        )
        obj.pk = created.pk
        obj._state.adding = False

    def save_formset(self, request, form, formset, change: bool) -> None:
        assignments = formset.save(commit=False)
        for assignment in formset.deleted_objects:
            unassign_user(assignment, actor=request.user)
        for assignment in assignments:
            if assignment.pk is None:
                assign_user(matter=form.instance, user=assignment.user, actor=request.user)
        formset.save_m2m()
