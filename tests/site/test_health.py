"""/healthz and /readyz (docs/operations.md, "Health"): real checks against the test database,
the configured embedder, the channel layer, the job queue and the fake LLM over HTTP."""
from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from remember.extraction import KNOWLEDGE_ENVELOPE, KNOWLEDGE_SCHEMA
from infra.llm import LLMClient, Role
from records.tasks import purge_expired_task
from tests.fake_llm import json_reply
from tests.live_server import running_server

pytestmark = pytest.mark.django_db

REQUIRED = {"database", "pgvector", "embeddings", "channel_layer", "job_queue"}


def test_healthz_answers_without_login():
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_readyz_is_ready_when_every_required_check_passes(settings):
    settings.LLM_BASE_URL = ""
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ready", body
    assert set(body["checks"]) == REQUIRED
    assert all(check["ok"] and check["required"] for check in body["checks"].values())
    assert body["checks"]["pgvector"]["detail"].startswith("vector ")
    assert body["checks"]["embeddings"]["detail"].endswith(f"{settings.NOTE_EMBEDDING_DIMENSIONS}-d")


def test_a_task_nobody_takes_makes_the_service_not_ready(settings):
    settings.LLM_BASE_URL = ""
    purge_expired_task.enqueue()
    ten_minutes_ago = timezone.now() - timedelta(minutes=10)  # due since then, nobody took it
    DBTaskResult.objects.filter(status="READY").update(enqueued_at=ten_minutes_ago, run_after=ten_minutes_ago)
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 503
    assert body["status"] == "not_ready"
    assert not body["checks"]["job_queue"]["ok"]
    assert "worker" in body["checks"]["job_queue"]["detail"]
    assert body["checks"]["database"]["ok"]  # the other checks still report


def test_a_backlog_a_worker_is_working_through_is_not_a_stalled_worker(settings):
    settings.LLM_BASE_URL = ""
    long_ago = timezone.now() - timedelta(minutes=30)
    for _ in range(2):
        purge_expired_task.enqueue()
    DBTaskResult.objects.filter(status="READY").update(enqueued_at=long_ago, run_after=long_ago)
    started = DBTaskResult.objects.filter(status="READY").first()
    DBTaskResult.objects.filter(pk=started.pk).update(status="RUNNING", started_at=timezone.now())
    body = Client().get("/readyz").json()
    assert body["status"] == "ready", body
    assert "working through" in body["checks"]["job_queue"]["detail"], body


def test_a_task_waiting_for_its_time_is_not_a_stalled_worker(settings):
    settings.LLM_BASE_URL = ""
    purge_expired_task.using(run_after=timezone.now() + timedelta(hours=6)).enqueue()
    DBTaskResult.objects.filter(status="READY").update(enqueued_at=timezone.now() - timedelta(hours=1))
    assert Client().get("/readyz").status_code == 200


def test_an_unreachable_llm_is_degraded_not_down_and_its_address_is_not_shown(settings):
    settings.LLM_BASE_URL = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    settings.LLM_API_KEY = "secret-key-123"
    response = Client().get("/readyz")
    body = response.json()
    assert response.status_code == 200
    assert body["status"] == "degraded"
    assert body["checks"]["llm"] == {**body["checks"]["llm"], "ok": False, "required": False}
    assert "secret-key-123" not in response.content.decode()
    assert "127.0.0.1:9" not in response.content.decode()


def test_a_reachable_llm_is_checked_over_http(settings, fake_llm):
    settings.LLM_BASE_URL, settings.LLM_MODEL = fake_llm.base_url, fake_llm.model
    body = Client().get("/readyz").json()
    assert body["status"] == "ready", body
    assert body["checks"]["llm"]["ok"], body


@pytest.mark.django_db(transaction=True)
def test_readyz_never_cuts_a_running_llamacpp_stream_short(settings, llm_online):
    """On the live llama.cpp server, ``make run``'s first /readyz (GET /models, which waits for
    the model lock there) ended a running extraction stream. The probe takes a request slot
    without waiting: while the product's request runs it is not sent, and the stream ends with
    its finish reason; once the server is idle the probe reaches it."""
    settings.LLM_MAX_CONCURRENT_REQUESTS = 1  # README's llama.cpp block
    llm_online.profile = "slow"
    llm_online.slow_token_seconds = 0.02
    llm_online.script(json_reply({"knowledge": [
        {"content": "房东于2024年6月30日租期届满后拒绝退还押金八千元，理由是墙面有污渍需要重新粉刷。", "category": "事实"}]}))
    extracted: dict = {}

    def extract() -> None:
        client = LLMClient.from_settings(Role.EXTRACTION)
        extracted.update(client.complete_json("提取知识", schema=KNOWLEDGE_SCHEMA, schema_name="knowledge_extraction",
                                              envelope=KNOWLEDGE_ENVELOPE))

    worker = threading.Thread(target=extract)
    worker.start()
    deadline = time.monotonic() + 10
    while not any(r.chunks_sent for r in llm_online.generating()) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert llm_online.generating(), "the extraction stream never started"
    body = Client().get("/readyz").json()
    worker.join(timeout=30)

    assert body["checks"]["llm"]["ok"] and body["checks"]["llm"]["detail"].startswith("in use"), body
    assert extracted["knowledge"], "the extraction stream was cut short"
    assert not any(r.interrupted for r in llm_online.requests)
    assert not any(r.path == "/v1/models" for r in llm_online.requests)
    idle = Client().get("/readyz").json()
    assert idle["checks"]["llm"] == {**idle["checks"]["llm"], "ok": True, "detail": "HTTP 200"}


@pytest.mark.django_db(transaction=True)
@pytest.mark.live_server
def test_probes_answer_under_the_production_profile_without_a_redirect(fake_llm, tmp_path):
    """LEGALMEM_PRODUCTION=1 redirects plain HTTP to HTTPS, except the probes a supervisor or load
    balancer sends to the process itself."""
    production = {"LEGALMEM_PRODUCTION": "1", "SECRET_KEY": "x" * 60, "ALLOWED_HOSTS": "127.0.0.1"}
    with running_server(fake_llm, production, tmp_path / "daphne.log") as port:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30) as response:
            assert response.status == 200
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=60) as response:
            assert response.status == 200
        request = urllib.request.Request(f"http://127.0.0.1:{port}/accounts/login/")
        opener = urllib.request.build_opener(NoRedirect())
        with pytest.raises(urllib.error.HTTPError) as redirected:
            opener.open(request, timeout=30)
        assert redirected.value.code == 301
        assert redirected.value.headers["Location"].startswith("https://")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Report a redirect instead of following it."""

    def redirect_request(self, *args, **kwargs):
        return None
