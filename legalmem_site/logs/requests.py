"""One log line per HTTP request, and the request id that ties its lines together.

The id comes from the caller's ``X-Request-ID`` when it is well-formed (a proxy's id follows
the request through our logs) or is made here; the response carries it back in the same
header. The line names the user and their firms, never a query string or a body — a search's
question travels in them.
"""
from __future__ import annotations

import logging
import time

from django.http import HttpRequest, HttpResponse

from legalmem_site.logs.context import bind, request_id_from
from legalmem_site.logs.events import log_event

logger = logging.getLogger("legalmem.access")

REQUEST_ID_HEADER = "X-Request-ID"
# Ids a URL may carry that are worth a field of their own (chat and records pages).
URL_IDS = ("conversation_id", "matter_id", "note_id")


def firm_ids_of(user) -> list[int]:
    """The firms the user belongs to (one small indexed query, only for a signed-in user)."""
    from memory.models import Membership

    return sorted(Membership.objects.filter(user_id=user.pk).values_list("firm_id", flat=True))


def _user_of(request: HttpRequest):
    """The signed-in user, if the request got that far (a static file or a probe does not)."""
    user = getattr(request, "user", None)
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
