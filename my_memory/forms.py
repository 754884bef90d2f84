"""Forms of the "my memory" page: filters, a correction, a forget. They validate input and
report clear errors; the writing is done by memory.services.notes."""
from __future__ import annotations

from datetime import datetime

from django import forms
from django.utils.translation import gettext_lazy as _

from memory.as_of import BadDate, memory_began, parse_as_of
from memory.models import Category, MemoryScope, Note
from my_memory.pages import MemoryFilters, filter_matters
from recall import MAX_QUERY_CHARS
from memory.services.notes import MAX_NOTE_CHARS

STATUS_CHOICES = [
    (Note.Status.ACTIVE, _("current")),
    (Note.Status.SUPERSEDED, _("superseded")),
    (Note.Status.FORGOTTEN, _("forgotten")),
]


class MemoryFilterForm(forms.Form):
    q = forms.CharField(label=_("Search"), required=False, max_length=MAX_QUERY_CHARS, strip=True)
    scope = forms.ChoiceField(label=_("Layer"), required=False)
    matter = forms.TypedChoiceField(label=_("Matter"), required=False, coerce=int, empty_value=None)
    category = forms.ChoiceField(label=_("Category"), required=False)
    status = forms.ChoiceField(label=_("Status"), required=False, choices=STATUS_CHOICES)
    as_of = forms.CharField(label=_("As of"), required=False, max_length=40, strip=True,
                            widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user
        everything = [("", _("all"))]
        self.fields["scope"].choices = everything + list(MemoryScope.choices)
        self.fields["category"].choices = everything + list(Category.choices)
        self.fields["matter"].choices = everything + [
            (matter.pk, f"{matter.reference} {matter.title}".strip()) for matter in filter_matters(user)
        ]

    def clean_as_of(self) -> datetime | None:
        """The memory as it stood at that day's end (``memory.as_of``); said why when refused."""
        try:
            return parse_as_of(self.cleaned_data.get("as_of"), began=memory_began(self.user))
        except BadDate as error:
            raise forms.ValidationError(str(error)) from None

    def filters(self) -> MemoryFilters:
        data = self.cleaned_data
        return MemoryFilters(
            query=data.get("q") or "",
            scope=data.get("scope") or "",
            matter_id=data.get("matter"),
            category=data.get("category") or "",
            status=data.get("status") or Note.Status.ACTIVE,
            as_of=data.get("as_of"),
        )


class CorrectNoteForm(forms.Form):
    content = forms.CharField(
        label=_("Corrected content"), widget=forms.Textarea(attrs={"rows": 3}), max_length=MAX_NOTE_CHARS
    )
    category = forms.ChoiceField(label=_("Category"), choices=Category.choices)
    reason = forms.CharField(label=_("Why (optional)"), required=False, max_length=500)


class ForgetNoteForm(forms.Form):
    reason = forms.CharField(label=_("Why (optional)"), required=False, max_length=500)
