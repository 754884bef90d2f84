from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class LoginsConfig(AppConfig):
    name = "logins"
    verbose_name = _("Logins")

    def ready(self) -> None:
        from logins import receivers  # noqa: F401 - connects the axes lock-out signal
