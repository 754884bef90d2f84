"""A throw-away database on the data folder's server for a benchmark: created (migrated) on
entry, dropped on exit unless ``BENCH_KEEP_DB=1``, so figures never depend on anyone's notes.
``BENCH_REUSE_DB=1`` opens a database kept by an earlier run (migrated again if needed) instead of
creating it, and keeps it: the benchmark then skips building its data (profiling iterations)."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection, connections


@contextmanager
def throwaway_database(name: str) -> Iterator[None]:
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = name
    old_name = connection.settings_dict["NAME"]
    reuse = reusing_database()
    print(f"[bench] {'reusing' if reuse else 'creating throw-away'} database {name} (cpus={os.cpu_count()})", flush=True)
    connection.creation.create_test_db(verbosity=0, autoclobber=not reuse, serialize=False, keepdb=reuse)
    try:
        yield
    finally:
        if os.environ.get("BENCH_KEEP_DB") != "1" and not reuse:
            # The search's parallel reads hold connections in their own threads: FORCE ends them.
            connections.close_all()
            connection.settings_dict["NAME"] = old_name
            with connection._nodb_cursor() as cursor:
                cursor.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            print(f"[bench] dropped {name}", flush=True)


def reusing_database() -> bool:
    """Whether this run reuses a kept benchmark database (``BENCH_REUSE_DB=1``)."""
    return os.environ.get("BENCH_REUSE_DB") == "1"
