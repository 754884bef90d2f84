from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class NavigationConfig(AppConfig):
    name = "navigation"
    verbose_name = _("Navigation graph")

    def ready(self) -> None:
        """Refresh stored graphs after note changes; erase the stored graphs of a firm with its
        erased data (``memory.erasure_hooks``, run by records); offer ``layered_nav`` to the
        search (``strategy=layered_nav``) through recall's registry."""
        from memory.erasure_hooks import register_erasure_hook
        from navigation import cache, signals
        from navigation.services import erase_firm_snapshots

        signals.connect()
        register_erasure_hook("navigation_snapshots", erase_firm_snapshots, after_commit=cache.clear)
        try:
            from recall import register_strategy
        except ImportError:  # recall not installed: /api/navigation/search still serves it
            return
        from navigation.search import layered_nav_strategy

        register_strategy("layered_nav", layered_nav_strategy, replace=True)
