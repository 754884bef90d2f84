"""The navigation page's date control: the memory as it stood at the end of a day, read by the
one parser (``memory.as_of.parse_as_of``); a refused date is said on the page."""
from __future__ import annotations

from datetime import datetime

from django import forms
from django.utils.translation import gettext_lazy as _

from memory.as_of import BadDate, memory_began, parse_as_of


class AsOfForm(forms.Form):
    as_of = forms.CharField(label=_("As of"), required=False, max_length=40, strip=True,
                            widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, user, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.user = user

    def clean_as_of(self) -> datetime | None:
        """The moment asked for, None for now; said why when refused (in the reader's language)."""
        try:
            return parse_as_of(self.cleaned_data.get("as_of"), began=memory_began(self.user))
        except BadDate as error:
            raise forms.ValidationError(str(error)) from None
