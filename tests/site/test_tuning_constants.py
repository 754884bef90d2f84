"""Tuning is code — a constant next to what it tunes, or a plain setting of settings.py's "Tuning"
section — never the environment: a deployment that still sets a retired variable is stopped with
one line naming it and where the value lives now (legalmem_site/environment.py, ``RETIRED``)."""
from __future__ import annotations

import importlib
import re

import pytest

from django.conf import settings

from legalmem_site import settings as product_settings
from legalmem_site.environment import DECLARED, RETIRED, TUNING_SETTING, ConfigError, check_retired
from tests.site.product_packages import product_modules
from tests.site.test_configuration import BASE_DIR, run_manage


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "variable, where",
    [
        ("ROUTING_SAME_SLOT_SIMILARITY", "remember/routing/thresholds.py"),
        ("PERSONA_MIN_EVIDENCE", "remember/persona.py"),
        ("NAV_M", "navigation/tuning.py"),
        ("NAV_MAX_NOTES", "navigation/tuning.py"),
        ("LLM_MAX_RETRIES", "legalmem_site/settings.py"),
        ("LLM_MAX_REQUEST_SECONDS", "infra/llm/config.py"),
        ("CHAT_RATE_LIMIT_PER_MINUTE", "legalmem_site/settings.py"),
        ("TURN_HEARTBEAT_SECONDS", "legalmem_site/settings.py"),
        ("SECURE_HSTS_SECONDS", "LEGALMEM_PRODUCTION"),
    ],
)
def test_a_retired_variable_stops_the_start_naming_where_its_value_lives(variable, where):
    result = run_manage({variable: "0.5"})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("configuration error: "), result.stderr
    assert variable in lines[0], result.stderr
    assert where in lines[0], result.stderr


@pytest.mark.parametrize("variable", sorted(RETIRED))
def test_every_retired_variable_is_refused(variable):
    with pytest.raises(ConfigError, match=rf"^{variable} is no longer read from the environment: it is "):
        check_retired({variable: "1"})


def test_no_retired_name_is_still_declared_and_each_names_an_existing_file():
    assert not set(RETIRED) & set(DECLARED)
    for where in set(RETIRED.values()):
        for path in re.findall(r"[\w/]+\.py", where):
            assert (BASE_DIR / path).is_file(), where


# Where each retired variable's value lives now, as a constant of the same name (the Django
# settings among them stay Django settings, fixed in legalmem_site/settings.py).
CONSTANT_MODULES = {
    "remember/routing/thresholds.py": "remember.routing.thresholds",
    "remember/persona.py": "remember.persona",
    "navigation/tuning.py": "navigation.tuning",
    "infra/llm/config.py": "infra.llm.config",
    "infra/embeddings/__init__.py": "infra.embeddings",
    "remember/message_index.py": "remember.message_index",
    "remember/services/turn_jobs.py": "remember.services.turn_jobs",
    "infra/workers.py": "infra.workers",
    "records/tasks.py": "records.tasks",
    "infra/http_input.py": "infra.http_input",
    "infra/text_hygiene.py": "infra.text_hygiene",
    "chat/turns.py": "chat.turns",
    "chat/consumers.py": "chat.consumers",
    "legalmem_site/serving.py": "legalmem_site.serving",
}


@pytest.mark.parametrize("variable", sorted(n for n, w in RETIRED.items()
                                            if re.search(r"in (\S+\.py)$", w) and "settings.py" not in w))
def test_a_retired_tuning_variable_is_a_constant_of_the_same_name(variable):
    path = re.search(r"in (\S+\.py)$", RETIRED[variable]).group(1)
    module = importlib.import_module(CONSTANT_MODULES[path])
    assert hasattr(module, variable), f"{variable} is not a constant of {path}"


SETTINGS_FILE = BASE_DIR / "legalmem_site" / "settings.py"


def tuning_section() -> list[str]:
    """The names settings.py's "Tuning" section declares, in order."""
    section = SETTINGS_FILE.read_text(encoding="utf-8").split("# --- Tuning ", 1)[1].split("\n# --- ", 1)[0]
    return re.findall(r"^([A-Z][A-Z0-9_]*)\s*=", section, re.MULTILINE)


def test_each_tuning_setting_is_declared_once_in_the_settings_and_nowhere_else():
    """Plain values of settings.py's "Tuning" section (never read from the environment: not in
    ``DECLARED``), each once, and no second declaration — a module constant of the same name — in
    the product. A retired variable whose value became a setting is one of them."""
    names = tuning_section()
    assert names and len(names) == len(set(names))
    assert not set(names) & set(DECLARED)
    assert {n for n, w in RETIRED.items() if w == TUNING_SETTING} <= set(names)
    for name in names:
        assert hasattr(settings, name) and hasattr(product_settings, name), name
    declared = re.compile(rf"^({'|'.join(names)})\s*[:=]", re.MULTILINE)
    twice = sorted(f"{path.relative_to(BASE_DIR)}: {found}" for path in product_modules(BASE_DIR)
                   if path != SETTINGS_FILE for found in declared.findall(path.read_text(encoding="utf-8")))
    assert not twice, f"tuning settings declared again beside the code: {twice}"
    assert sorted(declared.findall(SETTINGS_FILE.read_text(encoding="utf-8"))) == sorted(names)


def test_the_launcher_refuses_a_retired_variable_before_starting_anything(monkeypatch, capsys):
    from legalmem_site import launcher

    monkeypatch.setenv("LEGALMEM_PG_SHARED_BUFFERS", "4GB")
    monkeypatch.setattr(launcher, "command_run", lambda: pytest.fail("the launcher started"))
    assert launcher.main(["run"]) == 2
    error = capsys.readouterr().err
    assert "LEGALMEM_PG_SHARED_BUFFERS is no longer read from the environment" in error
    assert "legalmem_site/launcher.py" in error
