"""Django settings for the product processes a test or a benchmark starts (Daphne, run_worker,
`make run`), which it cannot change with pytest-django's ``settings`` fixture.

``overrides_env(settings=...)`` gives the environment for such a process: it runs with
``tests.product_settings`` (the product's settings, then the given ones — tuning included, the
"Tuning" section of legalmem_site/settings.py). Module constants are not patched, here or anywhere
in the suite (tests/site/test_tuning_not_patched.py). The channel is the test-only variable
``LEGALMEM_TEST_OVERRIDES``, read in tests/product_settings.py and nowhere in the product.
"""
from __future__ import annotations

import json
from typing import Any

OVERRIDES_VARIABLE = "LEGALMEM_TEST_OVERRIDES"


def overrides_env(*, settings: dict[str, Any]) -> dict[str, str]:
    """The environment variables that start a product process with these Django ``settings``."""
    return {
        "DJANGO_SETTINGS_MODULE": "tests.product_settings",
        OVERRIDES_VARIABLE: json.dumps({"settings": settings}),
    }
