from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class MemoryConfig(AppConfig):
    name = "memory"
    verbose_name = _("Memory")

    def ready(self) -> None:
        # numpy's OpenBLAS starts a thread per core for a large product and keeps them spinning
        # after it; on a machine whose cores the web, worker and database share, that slowed the
        # query encoder and every read beside it (docs/performance.md, "Fifth round"). The
        # products here (the kept exact-layer vectors, ~0.5 ms for 14k) run on one thread.
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")

        # infra reads none of memory's tables: memory fills its registries (docs/architecture.md).
        from infra.llm.shared import register_shared_stores
        from infra.logs.requests import register_firm_lookup
        from infra.metrics import register_database_collector
        from memory.llm_stores import DatabaseModeStore, DatabaseSpeedStore
        from memory.metrics import DatabaseCollector
        from memory.selectors import firm_ids_of_user

        register_shared_stores(modes=DatabaseModeStore, speeds=DatabaseSpeedStore)
        register_database_collector(DatabaseCollector())
        register_firm_lookup(firm_ids_of_user)
