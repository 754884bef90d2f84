from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NavigationConfig(AppConfig):
    name = "navigation"
    verbose_name = _("Navigation graph")

    def ready(self) -> None:
        """Refresh stored graphs after note changes; offer ``layered_nav`` to memory's search
        (``strategy=layered_nav``) when its registry exists."""
        from navigation import signals

        signals.connect()
        try:
            from recall import register_strategy
        except ImportError:  # retrieval not installed: /api/navigation/search still serves it
            return
        from navigation.search import layered_nav_strategy

        register_strategy("layered_nav", layered_nav_strategy, replace=True)
