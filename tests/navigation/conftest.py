"""Every navigation test starts and ends with an empty per-process graph cache."""
from __future__ import annotations

import pytest

from navigation import cache


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()
