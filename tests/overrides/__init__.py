"""Settings and tuning constants for the product processes a test or a benchmark starts (Daphne,
run_worker, `make run`), which it cannot monkeypatch.

``overrides_env(settings=..., constants=...)`` gives the environment for such a process: it runs
with ``tests.product_settings`` (the product's settings, then the given Django settings) and this
app, which sets each ``"module.NAME"`` constant once the apps are ready. The channel is the
test-only variable ``LEGALMEM_TEST_OVERRIDES``, read here and in tests/product_settings.py and
nowhere in the product.
"""
from __future__ import annotations

import json
from typing import Any

OVERRIDES_VARIABLE = "LEGALMEM_TEST_OVERRIDES"


def overrides_env(*, settings: dict[str, Any] | None = None, constants: dict[str, Any] | None = None) -> dict[str, str]:
    return {
        "DJANGO_SETTINGS_MODULE": "tests.product_settings",
        OVERRIDES_VARIABLE: json.dumps({"settings": settings or {}, "constants": constants or {}}),
    }
