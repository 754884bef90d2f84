"""The My memory pages and API see the same notes as memory's admin tests (one per visibility case)."""
from tests.memory.conftest import memory_notes  # noqa: F401 - the fixture, shared
