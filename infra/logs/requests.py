"""One log line per HTTP request, and the request id that ties its lines together.

The id comes from the caller's ``X-Request-ID`` when it is well-formed (a proxy's id follows
the request through our logs) or is made here; the response carries it back in the same
header. The line names the user and their firms, never a query string or a body — a search's
question travels in them.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable

from django.http import HttpRequest, HttpResponse
from django.utils.functional import SimpleLazyObject, empty

from infra.logs.context import bind, request_id_from
from infra.logs.events import log_event

logger = logging.getLogger("legalmem.access")

REQUEST_ID_HEADER = "X-Request-ID"
# Ids a URL may carry that are worth a field of their own (chat and records pages).
URL_IDS = ("conversation_id", "matter_id", "note_id")


FIRMS_CACHE_SECONDS = 60.0  # a log line may name a firm the user left a minute ago; access never reads this
FIRMS_CACHE_USERS = 10_000
_firms_cache: dict[int, tuple[float, list[int]]] = {}
# Who belongs to which firm is the memory app's to say: it registers the lookup (user id → firm
# ids) from its AppConfig.ready(); infra reads no LegalMem table itself.
_firm_lookup: Callable[[int], Iterable[int]] | None = None


def register_firm_lookup(lookup: Callable[[int], Iterable[int]]) -> None:
    """Name a user's firms on their request lines with ``lookup(user_id)``."""
    global _firm_lookup
    _firm_lookup = lookup
    _firms_cache.clear()


def firm_ids_of(user) -> list[int] | None:
    """The firms the user belongs to, for the log line: one small indexed query per user a minute
    in each process (bench/bench_logs.py measures what a request pays); None without a lookup."""
    if _firm_lookup is None:
        return None
    now = time.monotonic()
    cached = _firms_cache.get(user.pk)
    if cached is not None and now - cached[0] < FIRMS_CACHE_SECONDS:
        return cached[1]
    if len(_firms_cache) >= FIRMS_CACHE_USERS:
        _firms_cache.clear()
    firm_ids = sorted(_firm_lookup(user.pk))
    _firms_cache[user.pk] = (now, firm_ids)
    return firm_ids


def _user_of(request: HttpRequest):
    """The signed-in user if the request looked them up (a page, an API call); a probe, a scrape
    or a static file never loads the session, and its log line does not load it either."""
    user = getattr(request, "user", None)
    if isinstance(user, SimpleLazyObject) and user._wrapped is empty:  # never evaluated: nobody asked
        return None
    return user if user is not None and user.is_authenticated else None


class RequestLogMiddleware:
    """Outermost middleware: binds the request id for every line written while it is served,
    then writes the request's own line (method, route, status, duration, user, firms)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        request_id = request_id_from(request.headers.get(REQUEST_ID_HEADER))
        request.request_id = request_id
        started = time.perf_counter()
        with bind(request_id=request_id):
            response = self.get_response(request)
            response[REQUEST_ID_HEADER] = request_id
            self._log(request, response, started)
        return response

    def _log(self, request: HttpRequest, response: HttpResponse, started: float) -> None:
        user = _user_of(request)
        match = getattr(request, "resolver_match", None)
        kwargs = match.kwargs if match else {}
        log_event(
            logger, "http_request",
            level=logging.ERROR if response.status_code >= 500 else logging.INFO,
            method=request.method,
            path=request.path,  # never the query string
            route=match.route if match else None,
            status=response.status_code,
            duration_ms=round((time.perf_counter() - started) * 1000, 1),
            user_id=user.pk if user else None,
            firm_ids=firm_ids_of(user) if user else None,
            **{name: str(kwargs[name]) if name == "note_id" else kwargs[name] for name in URL_IDS if name in kwargs},
        )
