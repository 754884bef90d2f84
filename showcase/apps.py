from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ShowcaseConfig(AppConfig):
    """The month-long demo story and its command; no models."""

    name = "showcase"
    verbose_name = _("Showcase")
