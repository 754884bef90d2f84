"""One migrated template database for every test database of a run — and of the next runs while
the migrations stay the same.

Each pytest-xdist worker gets its own test database (``test_legalmem_gw0``, …). Migrating each
one from nothing cost 17–57 s per worker on two cores, every run. Instead the first worker to
get here migrates ``test_legalmem_template`` once (the others wait on a PostgreSQL advisory lock)
and every test database is created from it (``CREATE DATABASE … TEMPLATE``, Django's
``DATABASES[…]["TEST"]["TEMPLATE"]``); Django's own migrate on the copy then finds nothing to do.
The template carries a fingerprint of every installed app's migration files (a database
comment): when a migration is added or edited, the next run builds the template again.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

TEMPLATE_NAME = "test_legalmem_template"
_LOCK_KEY = 7_215_500_001  # pg_advisory_lock key of the template's builder


def migrations_fingerprint() -> str:
    """SHA-256 over the migration files of every installed app (names and bytes)."""
    from django.apps import apps

    digest = hashlib.sha256()
    for config in sorted(apps.get_app_configs(), key=lambda c: c.label):
        folder = Path(config.path) / "migrations"
        for path in sorted(folder.glob("*.py")) if folder.is_dir() else ():
            digest.update(f"{config.label}/{path.name}\n".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _maintenance_cursor():
    """A cursor on the server's ``postgres`` database (autocommit), for CREATE / DROP DATABASE."""
    from django.db import connection

    return connection._nodb_cursor()


def _template_fingerprint(cursor) -> str | None:
    cursor.execute(
        "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s", [TEMPLATE_NAME]
    )
    row = cursor.fetchone()
    return None if row is None else (row[0] or "")


def _build_template(fingerprint: str) -> None:
    """Create the template database and migrate it, as Django's test runner would a test database."""
    from django.core.management import call_command
    from django.db import connection

    with _maintenance_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{TEMPLATE_NAME}"')
        cursor.execute(f'CREATE DATABASE "{TEMPLATE_NAME}"')
    own_name = connection.settings_dict["NAME"]
    connection.close()
    connection.settings_dict["NAME"] = TEMPLATE_NAME
    try:
        call_command("migrate", verbosity=0, interactive=False, run_syncdb=True)
    finally:
        connection.close()  # CREATE DATABASE … TEMPLATE refuses a template with a session on it
        connection.settings_dict["NAME"] = own_name
    with _maintenance_cursor() as cursor:
        cursor.execute(f"COMMENT ON DATABASE \"{TEMPLATE_NAME}\" IS '{fingerprint}'")


def ensure_template() -> None:
    """The template database exists and matches today's migrations (built once, under a lock)."""
    fingerprint = migrations_fingerprint()
    with _maintenance_cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [_LOCK_KEY])
        try:
            if _template_fingerprint(cursor) != fingerprint:
                _build_template(fingerprint)
        finally:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_LOCK_KEY])


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, django_db_blocker) -> None:
    """pytest-django's hook just before the test databases are created: point them at the template."""
    from django.conf import settings

    with django_db_blocker.unblock():
        ensure_template()
    settings.DATABASES["default"].setdefault("TEST", {})["TEMPLATE"] = TEMPLATE_NAME
