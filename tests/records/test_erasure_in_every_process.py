"""An erasure made by another process (``manage.py erase`` on the same database) is followed by
this one: its next search forgets the search texts, kept vectors and read statements it had
cached, and a worker does the same before its next job (docs/records.md, "In-process caches")."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from infra.embeddings import recent_queries
from memory.models import AuditEvent, AuditLog, Conversation
from remember.management.commands.run_worker import StoppingWorker
from remember.routing.slots import read_statement
from tests.clients import client_for
from tests.live_server import test_database_url
from tests.records.conftest import SECRET_NAME
from tests.task_worker import run_worker_once

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.subprocess]

ROOT = Path(__file__).resolve().parents[2]


def erase_elsewhere(conversation: Conversation, data_folder: Path) -> None:
    """``manage.py erase --conversation`` in a process of its own, on the test database."""
    env = {**os.environ, "DATABASE_URL": test_database_url(), "SECRET_KEY": settings.SECRET_KEY,
           "LEGALMEM_DATA_DIR": str(data_folder)}
    result = subprocess.run(
        [sys.executable, "manage.py", "erase", "--conversation", str(conversation.pk), "--firm",
         conversation.firm.slug, "--reason", "the client's written request"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert AuditLog.objects.filter(event_type=AuditEvent.ERASED, object_id=str(conversation.pk)).exists()


def search(user, query: str) -> None:
    response = client_for(user).post("/api/memory/search", {"query": query, "k": 10}, format="json")
    assert response.status_code == 200, response.content


def kept_texts() -> str:
    return " | ".join(recent_queries.texts())


def test_the_next_search_after_another_process_erased_forgets_what_this_process_cached(
        world, deposit_memory, data_folder):
    secret, _other = deposit_memory
    search(world.alice, f"{SECRET_NAME}扣了多少押金")
    assert SECRET_NAME in kept_texts()
    assert read_statement.cache_info().currsize > 0  # the turn job read its notes' statements
    search(world.alice, "笔记本电脑花屏")  # a search alone does not forget: nothing was erased
    assert SECRET_NAME in kept_texts()

    erase_elsewhere(secret, data_folder)
    assert SECRET_NAME in kept_texts()  # this process has not looked yet

    search(world.bob, "笔记本电脑退货")  # any user's search reads the newest erasure
    assert SECRET_NAME not in kept_texts() and "笔记本电脑花屏" not in kept_texts()
    # (this search's own text may be gone too: it is encoded while the check runs)
    assert set(recent_queries.texts()) <= {"笔记本电脑退货"}
    assert read_statement.cache_info().currsize == 0
    search(world.alice, "笔记本电脑发票")  # and the cache fills again
    assert "笔记本电脑发票" in recent_queries.texts()


def test_a_worker_forgets_before_its_next_job_after_another_process_erased(world, deposit_memory, make_turn,
                                                                           data_folder):
    secret, other = deposit_memory
    search(world.alice, f"{SECRET_NAME}扣了多少押金")
    make_turn(other, "电脑的发票日期是2024年3月5日。", "好的。", run=False)  # a job waiting for the worker
    erase_elsewhere(secret, data_folder)
    assert SECRET_NAME in kept_texts()

    finished = run_worker_once(StoppingWorker)
    assert finished.status == "SUCCESSFUL", finished.traceback
    assert SECRET_NAME not in kept_texts()
