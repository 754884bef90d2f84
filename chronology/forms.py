"""The chronology's date control: "as the memory stood" (``as_of``, system time) and "as it held
in the world" (``valid_at``, world time), either or both, read by the one parser
(``memory.as_of.parse_as_of``); a refused date is said beside its field, in the reader's language.
The page, its exports and the API read their parameters through it."""
from __future__ import annotations

from datetime import datetime
from urllib.parse import urlencode

from django import forms
from django.utils.translation import gettext_lazy as _

from chronology.selectors import parse_as_of, parse_valid_at
from memory.as_of import BadDate
from memory.models import Matter

#: The longest date parameter read (an ISO date and time with an offset is 32 characters).
MAX_DATE_CHARS = 40


class ChronologyMomentForm(forms.Form):
    as_of = forms.CharField(label=_("As the memory stood on"), required=False, max_length=MAX_DATE_CHARS,
                            strip=True, widget=forms.DateInput(attrs={"type": "date"}))
    valid_at = forms.CharField(label=_("As it held in the world on"), required=False, max_length=MAX_DATE_CHARS,
                               strip=True, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, *args, matter: Matter, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.matter = matter

    def clean_as_of(self) -> datetime | None:
        """The memory as it stood at that day's end, None for now; said why when refused."""
        try:
            return parse_as_of(self.cleaned_data.get("as_of"), self.matter)
        except BadDate as error:
            raise forms.ValidationError(str(error)) from None

    def clean_valid_at(self) -> datetime | None:
        """What held in the world at that day's end (any real date), None for none."""
        try:
            return parse_valid_at(self.cleaned_data.get("valid_at"))
        except BadDate as error:
            raise forms.ValidationError(str(error)) from None

    def moments(self) -> tuple[datetime | None, datetime | None]:
        """(as_of, valid_at) of a valid form."""
        return self.cleaned_data.get("as_of"), self.cleaned_data.get("valid_at")

    def query(self) -> str:
        """The dates given, as the query string of the page's export links ("" for now)."""
        given = {name: str(self.data.get(name, "")).strip() for name in ("as_of", "valid_at")}
        given = {name: value for name, value in given.items() if value}
        return "?" + urlencode(given) if given else ""

    def messages(self) -> dict[str, list[str]]:
        """Each refused field's reasons (the API's 400 body)."""
        return {name: [str(message) for message in errors] for name, errors in self.errors.items()}
