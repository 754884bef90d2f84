"""Algorithm tuning is code (docs/refactor-a.md): a deployment that still sets a retired tuning
variable is stopped with one line naming it and the module the value lives in now."""
from __future__ import annotations

import pytest

from tests.site.test_configuration import run_manage


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "variable, module",
    [
        ("ROUTING_SAME_SLOT_SIMILARITY", "remember/routing/thresholds.py"),
        ("PERSONA_MIN_EVIDENCE", "remember/persona.py"),
        ("NAV_M", "navigation/tuning.py"),
    ],
)
def test_a_retired_tuning_variable_names_its_constant(variable, module):
    result = run_manage({variable: "0.5"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert variable in lines[0], result.stderr
    assert module in lines[0], result.stderr


@pytest.mark.subprocess
def test_deployment_settings_of_navigation_stay_in_the_environment():
    assert run_manage({"NAV_MAX_NOTES": "500", "NAV_CACHE_ENTRIES": "2"}).returncode == 0
