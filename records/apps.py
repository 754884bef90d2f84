from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RecordsConfig(AppConfig):
    """Erasure, retention, legal hold, matter transfer; no models."""

    name = "records"
    label = "records"
    verbose_name = _("Records")
