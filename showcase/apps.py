from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ShowcaseConfig(AppConfig):
    """Demo story and evaluation commands; no models."""

    name = "showcase"
    verbose_name = _("Showcase")
