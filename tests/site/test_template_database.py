"""The suite's test databases are copies of one migrated template (tests/template_database.py)."""
from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.template_database import TEMPLATE_NAME, _maintenance_cursor, _template_fingerprint, migrations_fingerprint

pytestmark = pytest.mark.django_db


def test_the_template_carries_todays_migrations_and_the_copy_needs_none():
    with _maintenance_cursor() as cursor:
        assert _template_fingerprint(cursor) == migrations_fingerprint()
    assert connection.settings_dict["TEST"]["TEMPLATE"] == TEMPLATE_NAME
    executor = MigrationExecutor(connection)
    assert executor.migration_plan(executor.loader.graph.leaf_nodes()) == []
