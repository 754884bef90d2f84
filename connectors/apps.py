from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ConnectorsConfig(AppConfig):
    """Personal access tokens and the MCP server: the firm's memory from other assistants."""

    name = "connectors"
    verbose_name = _("Connected assistants")

    def ready(self) -> None:
        from connectors import schema  # noqa: F401 — registers the Bearer scheme with drf-spectacular
