"""``/healthz`` (the process answers) and ``/readyz`` (it can serve a lawyer): what a load
balancer, a supervisor and ``make run``'s "ready" line ask (docs/operations.md, "Health").

``/readyz`` runs each check and answers 200 when every required one passes, else 503, with one
entry per check: ``ok``, milliseconds and a short detail — never a secret, a URL or note content.
Required: the database, pgvector, the embedding backend (one real encode whose width fits the
note column), the channel layer (one message round trip) and the job queue (a due task waiting
longer than ``READY_QUEUE_MAX_WAIT_SECONDS`` while no task started in that time: a stopped
worker shows here, a backlog being worked through does not). The LLM, when one is
configured, is checked too but not required: without it the chat still recalls and says the
model is unreachable, so the service is "degraded", not down.
"""
from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection
from django.db.models import Q
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

READY_QUEUE_MAX_WAIT_SECONDS = 300  # a due task waiting longer: no worker is taking jobs
LLM_CHECK_TIMEOUT_SECONDS = 2.0


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    required: bool
    ms: float
    detail: str

    def as_dict(self) -> dict:
        return {"ok": self.ok, "required": self.required, "ms": self.ms, "detail": self.detail}


def _database() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "SELECT 1"


def _pgvector() -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
    if row is None:
        raise RuntimeError("the vector extension is not installed")
    return f"vector {row[0]}"


def _embeddings() -> str:
    from infra.embeddings import get_embedder
    from memory.embedding_checks import check_dimensions

    embedder = get_embedder()
    width = check_dimensions(embedder)  # raises when the backend does not fit the note column
    vector = embedder.embed_query("ping")
    if len(vector) != width:
        raise RuntimeError(f"the encoder returned {len(vector)} values, the column holds {width}")
    return f"{settings.EMBEDDING_BACKEND}, {width}-d"


def _channel_layer() -> str:
    layer = get_channel_layer()
    if layer is None:
        raise RuntimeError("no channel layer is configured")

    async def round_trip() -> None:
        channel = await layer.new_channel("health.")
        await layer.send(channel, {"type": "health.ping"})
        message = await layer.receive(channel)
        if message.get("type") != "health.ping":
            raise RuntimeError("the channel layer returned another message")

    async_to_sync(round_trip)()
    return type(layer).__name__


def _job_queue() -> str:
    from django_tasks_db.models import DBTaskResult

    now = timezone.now()
    due = DBTaskResult.objects.filter(status="READY").filter(Q(run_after__isnull=True) | Q(run_after__lte=now))
    oldest = due.order_by("enqueued_at").values_list("enqueued_at", "run_after").first()
    if oldest is None:
        return "no task waiting"
    waited = now - max(moment for moment in oldest if moment is not None)
    window = timedelta(seconds=READY_QUEUE_MAX_WAIT_SECONDS)
    if waited > window:
        # A backlog is fine while a worker works through it (a task started in the window).
        moving = DBTaskResult.objects.filter(started_at__gte=now - window).exists()
        if not moving:
            raise RuntimeError(f"a task has waited {waited.total_seconds():.0f} s and none started: is a worker running?")
        return f"{due.count()} waiting, oldest {waited.total_seconds():.0f} s, a worker is working through them"
    return f"{due.count()} waiting, oldest {waited.total_seconds():.0f} s"


def _llm() -> str:
    """``GET /models`` — taking a request slot like any request, without waiting for one.

    llama-cpp-python's server answers ``/models`` only between generations, and a request
    waiting for it cuts the running stream short (``[DONE]`` with no finish reason): on the
    live server the first ``/readyz`` of ``make run`` broke off an extraction that way. So the
    probe goes through the request gate (``LLM_MAX_CONCURRENT_REQUESTS``): when every slot is
    busy, or a chat is waiting, the server is in use — the product's own request shows it
    reachable — and it is not probed."""
    from infra.llm.errors import LLMUnavailable
    from infra.llm.gate import Priority, RequestGate

    base = str(settings.LLM_BASE_URL or "").rstrip("/")
    gate = RequestGate(settings.LLM_MAX_CONCURRENT_REQUESTS, base_url=base, wait_seconds=0)
    try:
        lease = gate.acquire(Priority.BACKGROUND)
    except LLMUnavailable:
        return "in use: every request slot is busy (not probed: a probe would cut a llama.cpp stream short)"
    try:
        request = urllib.request.Request(f"{base}/models", headers={"Authorization": f"Bearer {settings.LLM_API_KEY}"})
        with urllib.request.urlopen(request, timeout=LLM_CHECK_TIMEOUT_SECONDS) as response:  # noqa: S310 - configured URL
            return f"HTTP {response.status}"
    finally:
        lease.release()


def _checks() -> list[tuple[str, Callable[[], str], bool]]:
    checks = [
        ("database", _database, True),
        ("pgvector", _pgvector, True),
        ("embeddings", _embeddings, True),
        ("channel_layer", _channel_layer, True),
        ("job_queue", _job_queue, True),
    ]
    if settings.LLM_BASE_URL:
        checks.append(("llm", _llm, False))
    return checks


def run_checks() -> list[CheckResult]:
    """Every readiness check, in order; a failing one says why in a line, never raises."""
    results = []
    for name, check, required in _checks():
        started = time.perf_counter()
        try:
            detail, ok = check(), True
        except Exception as exc:  # noqa: BLE001 - a failed check is the answer, not an error
            detail, ok = f"{type(exc).__name__}: {str(exc)[:200]}", False
        results.append(CheckResult(name, ok, required, round((time.perf_counter() - started) * 1000, 1), detail))
    return results


@require_safe
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """The process is up and answering HTTP (nothing else is touched)."""
    return JsonResponse({"status": "ok"})


@require_safe
@never_cache
def readyz(request: HttpRequest) -> JsonResponse:
    results = run_checks()
    if not all(r.ok for r in results if r.required):
        status, code = "not_ready", 503
    else:
        status, code = ("ready", 200) if all(r.ok for r in results) else ("degraded", 200)
    return JsonResponse({"status": status, "checks": {r.name: r.as_dict() for r in results}}, status=code)
