"""Tuning is code, next to what it tunes: a deployment that still sets a retired variable is
stopped with one line naming it and where the value lives now (legalmem_site/environment.py,
``RETIRED``)."""
from __future__ import annotations

import importlib
import re

import pytest

from legalmem_site.environment import DECLARED, RETIRED, ConfigError, check_retired
from tests.site.test_configuration import BASE_DIR, run_manage


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "variable, where",
    [
        ("ROUTING_SAME_SLOT_SIMILARITY", "remember/routing/thresholds.py"),
        ("PERSONA_MIN_EVIDENCE", "remember/persona.py"),
        ("NAV_M", "navigation/tuning.py"),
        ("NAV_MAX_NOTES", "navigation/tuning.py"),
        ("LLM_MAX_RETRIES", "infra/llm/config.py"),
        ("CHAT_RATE_LIMIT_PER_MINUTE", "chat/turns.py"),
        ("TURN_HEARTBEAT_SECONDS", "infra/workers.py"),
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
    "recall/query_text.py": "recall.query_text",
    "remember/message_index.py": "remember.message_index",
    "remember/working_memory.py": "remember.working_memory",
    "remember/services/turn_jobs.py": "remember.services.turn_jobs",
    "infra/workers.py": "infra.workers",
    "records/tasks.py": "records.tasks",
    "infra/http_input.py": "infra.http_input",
    "infra/text_hygiene.py": "infra.text_hygiene",
    "chat/turns.py": "chat.turns",
    "chat/consumers.py": "chat.consumers",
    "infra/logs/events.py": "infra.logs.events",
    "legalmem_site/serving.py": "legalmem_site.serving",
}


@pytest.mark.parametrize("variable", sorted(n for n, w in RETIRED.items()
                                            if re.search(r"in (\S+\.py)$", w) and "settings.py" not in w))
def test_a_retired_tuning_variable_is_a_constant_of_the_same_name(variable):
    path = re.search(r"in (\S+\.py)$", RETIRED[variable]).group(1)
    module = importlib.import_module(CONSTANT_MODULES[path])
    assert hasattr(module, variable), f"{variable} is not a constant of {path}"


def test_the_launcher_refuses_a_retired_variable_before_starting_anything(monkeypatch, capsys):
    from legalmem_site import launcher

    monkeypatch.setenv("LEGALMEM_PG_SHARED_BUFFERS", "4GB")
    monkeypatch.setattr(launcher, "command_run", lambda: pytest.fail("the launcher started"))
    assert launcher.main(["run"]) == 2
    error = capsys.readouterr().err
    assert "LEGALMEM_PG_SHARED_BUFFERS is no longer read from the environment" in error
    assert "legalmem_site/launcher.py" in error
