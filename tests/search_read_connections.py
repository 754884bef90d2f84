"""Pytest plugin: the connections the search's read workers keep (recall/alongside.py)
are closed at the end of the session, before pytest-django drops the test database (PostgreSQL
refuses to drop a database other sessions are connected to)."""
from __future__ import annotations

import pytest

from recall.alongside import close_read_connections


@pytest.fixture(scope="session", autouse=True)
def _close_search_read_connections(django_db_setup, django_db_blocker):
    """Torn down before ``django_db_setup`` (which it depends on), so before the drop."""
    yield
    close_read_connections()
