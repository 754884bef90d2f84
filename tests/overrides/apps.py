from __future__ import annotations

import importlib
import json
import os

from django.apps import AppConfig

from tests.overrides import OVERRIDES_VARIABLE


class OverridesConfig(AppConfig):
    name = "tests.overrides"
    label = "test_overrides"

    def ready(self) -> None:
        constants = json.loads(os.environ.get(OVERRIDES_VARIABLE, "{}")).get("constants", {})
        for target, value in constants.items():
            module_name, _, name = target.rpartition(".")
            module = importlib.import_module(module_name)
            if not hasattr(module, name):
                raise AttributeError(f"{OVERRIDES_VARIABLE}: {module_name} has no constant {name}")
            setattr(module, name, value)
