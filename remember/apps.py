from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RememberConfig(AppConfig):
    """The write path's management commands and background tasks; no models (they live in
    ``memory``)."""

    name = "remember"
    label = "remember"
    verbose_name = _("Write path")
