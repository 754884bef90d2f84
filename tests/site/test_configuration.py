"""Missing or wrong settings give one clear line naming the variable; the launcher guards its data folder."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from legalmem_site.launcher import DataFolderLock, LaunchError, check_pgvector

pytestmark = pytest.mark.subprocess

BASE_DIR = Path(__file__).resolve().parents[2]


def run_manage(env_changes: dict[str, str | None]) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": "postgresql://u@localhost/db", "SECRET_KEY": "x" * 40}
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "env_changes, variable",
    [
        ({"DATABASE_URL": None}, "DATABASE_URL"),
        ({"DATABASE_URL": "mysql://u@h/db"}, "DATABASE_URL"),
        ({"SECRET_KEY": None, "DEBUG": "false"}, "SECRET_KEY"),
        ({"DEBUG": "maybe"}, "DEBUG"),
        ({"REDIS_URL": "http://localhost:6379"}, "REDIS_URL"),
        ({"LLM_BASE_URL": "http://127.0.0.1:1/v1", "LLM_MODEL": None}, "LLM_MODEL"),
        ({"LLM_BASE_URL": "ftp://x"}, "LLM_BASE_URL"),
        ({"LLM_TIMEOUT_SECONDS": "soon"}, "LLM_TIMEOUT_SECONDS"),
        ({"EMBEDDING_BACKEND": "word2vec"}, "EMBEDDING_BACKEND"),
        ({"EMBEDDING_BACKEND": "openai"}, "EMBEDDING_BASE_URL"),
        ({"EMBEDDING_DIMENSIONS": "-1"}, "EMBEDDING_DIMENSIONS"),
    ],
)
def test_bad_setting_is_one_line_naming_the_variable(env_changes, variable):
    result = run_manage(env_changes)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("configuration error: ")
    assert variable in lines[0]


def test_a_second_holder_of_the_data_folder_is_refused(tmp_path):
    first = DataFolderLock(tmp_path / "legalmem.lock", "LegalMem")
    first.acquire()
    second = DataFolderLock(tmp_path / "legalmem.lock", "LegalMem")
    try:
        with pytest.raises(LaunchError, match=f"already running .*pid {os.getpid()}"):
            second.acquire()
    finally:
        first.release()
    second.acquire()  # free again once the first holder is gone
    second.release()


def test_an_unreachable_database_url_is_a_clear_error():
    with pytest.raises(LaunchError, match="DATABASE_URL: cannot connect to PostgreSQL"):
        check_pgvector("postgresql://nobody@127.0.0.1:9/none?connect_timeout=2", source="DATABASE_URL")


@pytest.mark.django_db
def test_the_test_database_passes_the_pgvector_check():
    check_pgvector(os.environ["DATABASE_URL"], source="DATABASE_URL")
