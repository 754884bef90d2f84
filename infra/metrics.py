"""Prometheus metrics at ``/metrics`` (docs/operations.md, "Metrics").

Counters and histograms are kept by ``prometheus_client``; with ``PROMETHEUS_MULTIPROC_DIR``
set (``make run`` sets it for the server and the worker) every process writes its own files
there and a scrape adds them up, so Daphne's and the worker's figures are one series. What the
database already knows — extraction jobs by status and the age of the oldest waiting one, notes
written by routing action — is read at scrape time, so it is right whichever process did it, by
the collectors apps register (``register_database_collector``; memory's is ``memory.metrics``).

The endpoint is off (404) unless ``METRICS_TOKEN`` (``Authorization: Bearer …``) or
``METRICS_ALLOWED_IPS`` is set; nothing in it names a firm, a user or note content.
"""
from __future__ import annotations

import hmac
import time

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import REGISTRY, Collector

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

HTTP_REQUESTS = Counter("legalmem_http_requests", "HTTP requests answered", ["method", "status"])
HTTP_SECONDS = Histogram("legalmem_http_request_seconds", "HTTP request time", ["method"], buckets=LATENCY_BUCKETS)
CHAT_TURNS = Counter("legalmem_chat_turns", "Chat turns over the websocket, by how the reply ended", ["status"])
ANSWER_MARKS = Counter("legalmem_answer_marked_sentences", "Answer sentences marked by the citation check, by mark",
                       ["mark"])
ANSWER_UNVERIFIED_CITATIONS = Counter("legalmem_answer_unverified_citations",
                                      "Statute citations in answers that no recalled item holds")
SEARCH_SECONDS = Histogram("legalmem_search_seconds", "search_memory time", ["strategy"], buckets=LATENCY_BUCKETS)
RECALLED = Counter("legalmem_recalled_hits", "Memories recalled by search, by layer", ["layer"])
QUERY_ENCODE_SECONDS = Histogram("legalmem_query_encode_seconds", "Query encoding time", buckets=LATENCY_BUCKETS)
LLM_JSON_REQUESTS = Counter("legalmem_llm_json_requests", "Structured LLM requests by JSON mode and outcome",
                            ["mode", "outcome"])
NAVIGATION_BUILDS = Counter("legalmem_navigation_builds", "Navigation graphs built or updated", ["kind"])

# --- Websocket, chat turns, LLM chat streams, embeddings, search stages, jobs ---
WS_CONNECTIONS = Counter("legalmem_websocket_connections", "Chat websocket connections by how the handshake ended",
                         ["outcome"])
WS_OPEN = Gauge("legalmem_websocket_connections_open", "Chat websockets open now", multiprocess_mode="livesum")
WS_FRAMES = Counter("legalmem_websocket_frames", "Chat websocket frames by direction and type", ["direction", "type"])
CHAT_TURN_SECONDS = Histogram("legalmem_chat_turn_seconds", "Chat turn time, question to saved reply", ["status"],
                              buckets=LATENCY_BUCKETS)
CHAT_FIRST_TOKEN_SECONDS = Histogram("legalmem_chat_first_token_seconds", "Chat turn time to the first token",
                                     buckets=LATENCY_BUCKETS)
CHAT_TURN_REJECTIONS = Counter("legalmem_chat_turn_rejections", "Questions refused before a turn started, by code",
                               ["code"])
LLM_CHAT_REQUESTS = Counter("legalmem_llm_chat_requests", "Streaming chat requests to the LLM by outcome", ["outcome"])
EMBEDDING_SECONDS = Histogram("legalmem_embedding_seconds", "Encoder time per call (query or passages)", ["kind"],
                              buckets=LATENCY_BUCKETS)
EMBEDDED_TEXTS = Counter("legalmem_embedded_texts", "Texts encoded (query or passages)", ["kind"])
SEARCH_STAGE_SECONDS = Histogram("legalmem_search_stage_seconds", "search_memory time by strategy and stage",
                                 ["strategy", "stage"], buckets=LATENCY_BUCKETS)
JOBS = Counter("legalmem_jobs", "Background job runs by job and outcome", ["job", "outcome"])
JOB_SECONDS = Histogram("legalmem_job_seconds", "Background job run time", ["job"], buckets=LATENCY_BUCKETS)

# Series whose every label value is known are shown at 0 from the start, so a dashboard (and a
# scrape under PROMETHEUS_MULTIPROC_DIR, which only sees values some process created) finds them.
for _kind in ("full", "incremental"):
    NAVIGATION_BUILDS.labels(_kind)
for _kind in ("query", "passages"):
    EMBEDDING_SECONDS.labels(_kind)
    EMBEDDED_TEXTS.labels(_kind)
for _outcome in ("accepted", "unauthenticated"):
    WS_CONNECTIONS.labels(_outcome)


# Collectors of figures the database holds for every process (read at scrape time). infra does not
# read LegalMem's tables: the app that owns them registers its collector from AppConfig.ready()
# (memory.metrics.DatabaseCollector: turn jobs and routing decisions).
_database_collectors: list[Collector] = []


def register_database_collector(collector: Collector) -> None:
    """Add ``collector`` to every scrape (once: registering the same class again replaces it)."""
    _database_collectors[:] = [c for c in _database_collectors if type(c) is not type(collector)]
    _database_collectors.append(collector)


def exposition() -> bytes:
    """This process's figures (or, under ``PROMETHEUS_MULTIPROC_DIR``, every process's, summed)
    followed by the database's."""
    if settings.PROMETHEUS_MULTIPROC_DIR:
        processes = CollectorRegistry()
        MultiProcessCollector(processes)
    else:
        processes = REGISTRY
    database = CollectorRegistry()
    for collector in _database_collectors:
        database.register(collector)
    return generate_latest(processes) + generate_latest(database)


def _allowed(request: HttpRequest) -> bool:
    token, addresses = settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS
    if not token and not addresses:
        raise Http404("metrics are off (set METRICS_TOKEN or METRICS_ALLOWED_IPS)")
    if token:
        given = request.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if given and hmac.compare_digest(given, token):
            return True
    return bool(addresses) and request.META.get("REMOTE_ADDR") in addresses


@require_safe
@never_cache
def metrics_view(request: HttpRequest) -> HttpResponse:
    if not _allowed(request):
        return HttpResponse("forbidden\n", status=403, content_type="text/plain")
    return HttpResponse(exposition(), content_type=CONTENT_TYPE_LATEST)


class RequestMetricsMiddleware:
    """Counts every HTTP request by method and status class, and times it."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)
        count_request(request.method or "", response.status_code, time.perf_counter() - started)
        return response


def count_request(method: str, status: int, seconds: float) -> None:
    """One answered HTTP request in the metrics (also for ``/mcp``, which skips the middleware)."""
    method = method if method in {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"} else "other"
    HTTP_REQUESTS.labels(method, f"{status // 100}xx").inc()
    HTTP_SECONDS.labels(method).observe(seconds)
