"""The form of the token page: name, permission, lifetime, firm, (optionally) matters, and the
language its assistant is answered in (the page's own, unless changed)."""
from __future__ import annotations

from django import forms
from django.conf import settings
from django.utils import translation
from django.utils.translation import gettext_lazy as _

from connectors.models import TokenScope
from connectors.selectors import firms_for_new_token
from memory.models import Matter

LIFETIMES = [(7, _("7 days")), (30, _("30 days")), (90, _("90 days")), (365, _("1 year"))]


class NewTokenForm(forms.Form):
    name = forms.CharField(label=_("Name"), max_length=100, strip=True,
                           help_text=_("Where you will use it, e.g. “Claude Desktop on my laptop”."))
    scope = forms.ChoiceField(label=_("Permission"), choices=TokenScope.choices, initial=TokenScope.READ)
    days = forms.TypedChoiceField(label=_("Expires after"), choices=LIFETIMES, coerce=int, initial=90)
    firm = forms.ModelChoiceField(label=_("Firm"), queryset=None, empty_label=None)
    matters = forms.ModelMultipleChoiceField(
        label=_("Limit to these matters (optional)"), queryset=None, required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Leave empty to reach every matter you are assigned to."),
    )
    language = forms.ChoiceField(
        label=_("Language of its messages"), choices=settings.LANGUAGES, required=False,
        help_text=_("Errors and notices the assistant gets through this token are in this language."),
    )

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["firm"].queryset = firms_for_new_token(user)
        self.fields["matters"].queryset = Matter.objects.assigned_to(user).select_related("firm").order_by(
            "reference", "title")
        self.fields["matters"].label_from_instance = lambda m: f"{m.reference} {m.title}".strip()
        self.fields["language"].initial = translation.get_language()

    def clean(self) -> dict:
        data = super().clean()
        firm, matters = data.get("firm"), data.get("matters") or []
        if firm is not None and any(matter.firm_id != firm.pk for matter in matters):
            self.add_error("matters", _("Choose only matters of the chosen firm."))
        data["language"] = data.get("language") or translation.get_language()  # a form posted without it
        return data
