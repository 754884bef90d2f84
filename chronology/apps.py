from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ChronologyConfig(AppConfig):
    """The matter chronology: its page, exports and API; no models (it reads ``memory``'s notes)."""

    name = "chronology"
    label = "chronology"
    verbose_name = _("Chronology")
