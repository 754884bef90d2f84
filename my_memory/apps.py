from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MyMemoryConfig(AppConfig):
    """Pages and API over the user's memory; no models."""

    name = "my_memory"
    label = "my_memory"
    verbose_name = _("My memory")
