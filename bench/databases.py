"""A throw-away database on the data folder's server for a benchmark: created (migrated) on
entry, dropped on exit unless ``BENCH_KEEP_DB=1``, so figures never depend on anyone's notes."""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

from django.conf import settings
from django.db import connection


@contextmanager
def throwaway_database(name: str) -> Iterator[None]:
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = name
    old_name = connection.settings_dict["NAME"]
    print(f"[bench] creating throw-away database {name} (cpus={os.cpu_count()})", flush=True)
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        yield
    finally:
        if os.environ.get("BENCH_KEEP_DB") != "1":
            connection.creation.destroy_test_db(old_name, verbosity=0)
            print(f"[bench] dropped {name}", flush=True)
