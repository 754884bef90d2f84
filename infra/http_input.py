"""Bounds on HTTP input, so bad input is a JSON 4xx and never a 500 (docs/production.md "Bad input").

- ``InputGuardMiddleware``: query strings and form posts (admin forms, login) pass the text
  rule of ``infra.text_hygiene``; an API body over INPUT_MAX_BODY_BYTES is a JSON 413 before it
  is read; any error page under ``/api/`` is JSON, never Django's HTML.
- ``BoundedJSONParser``: DRF's JSON parser with the same size bound, the nesting bound and the
  text rule over every key and string of the body (the field named in the 400).
- ``BoundedLimitOffsetPagination``: ``limit`` clamped to settings.INPUT_MAX_PAGE_LIMIT, an ``offset``
  past INPUT_MAX_OFFSET a 400 (an unbounded one reached PostgreSQL as ``bigint out of range``).
"""
from __future__ import annotations

import codecs
import logging
from collections.abc import Callable
from http import HTTPStatus
from typing import Any

from django.conf import settings
from django.core.exceptions import BadRequest, PermissionDenied, RequestDataTooBig, SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from rest_framework.exceptions import APIException, ParseError, ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.parsers import JSONParser
from rest_framework.response import Response

from infra.text_hygiene import UnsafeInput, check_text, parse_json

# Bounds of API input: a larger body is a JSON 413, a larger `?offset=` is a 400 (`?limit=` is
# clamped to settings.INPUT_MAX_PAGE_LIMIT).
INPUT_MAX_BODY_BYTES = 1024 * 1024
INPUT_MAX_OFFSET = 10_000_000

logger = logging.getLogger("legalmem.http")

API_PREFIX = "/api/"
# The largest id PostgreSQL's bigint holds: larger ids in a query are a 400/404, not a 500.
MAX_DB_ID = 2**63 - 1


class BodyTooLarge(APIException):
    status_code = 413
    default_code = "body_too_large"

    def __init__(self) -> None:
        super().__init__(f"the request body is larger than {INPUT_MAX_BODY_BYTES} bytes")


def _error_payload(error: UnsafeInput) -> dict[str, list[str]]:
    return {error.field: [error.message]}


class BoundedJSONParser(JSONParser):
    """JSON bodies of at most INPUT_MAX_BODY_BYTES, nested at most INPUT_MAX_JSON_DEPTH levels,
    with no NUL or lone surrogate anywhere (400 naming the field)."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        limit = INPUT_MAX_BODY_BYTES
        raw = stream.read(limit + 1)
        if len(raw) > limit:
            raise BodyTooLarge()
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.decode(raw, encoding)
        except (UnicodeDecodeError, LookupError) as error:
            raise ParseError(f"JSON parse error - the body is not {encoding} text ({error})") from None
        try:
            return parse_json(text)
        except UnsafeInput as error:
            if error.field == "body":
                raise ParseError(f"JSON parse error - the body {error.message}") from None
            raise ValidationError(_error_payload(error)) from None


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """LimitOffsetPagination whose ``limit`` is clamped and whose ``offset`` is bounded."""

    @property
    def max_limit(self) -> int:  # type: ignore[override]
        return settings.INPUT_MAX_PAGE_LIMIT

    def get_offset(self, request) -> int:
        offset = super().get_offset(request)
        if offset > INPUT_MAX_OFFSET:
            raise ValidationError({self.offset_query_param: [f"must be at most {INPUT_MAX_OFFSET}"]})
        return offset


def _unsafe_field(request: HttpRequest) -> UnsafeInput | None:
    """The first query or form parameter (name or value) that breaks the text rule."""
    sources = [request.GET]
    if request.method == "POST" and request.content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        sources.append(request.POST)
    for params in sources:
        for name, values in params.lists():
            try:
                check_text(name, "parameter name")
                for value in values:
                    check_text(value, name)
            except UnsafeInput as error:
                return error
    return None


def _json_error(status: int, payload: dict[str, Any]) -> JsonResponse:
    return JsonResponse(payload, status=status, json_dumps_params={"ensure_ascii": False})


class InputGuardMiddleware:
    """The HTTP side of the input rules (see the module docstring)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        is_api = request.path.startswith(API_PREFIX)
        limit = _body_limit(request, is_api)
        if limit is not None and _content_length(request) > limit:
            if is_api:
                return _json_error(413, {"detail": f"the request body is larger than {limit} bytes"})
            return HttpResponse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE.phrase, status=413, content_type="text/plain")
        try:
            unsafe = _unsafe_field(request)
        except RequestDataTooBig:
            if is_api:
                return _json_error(413, {"detail": BodyTooLarge().detail})
            return HttpResponse(HTTPStatus.REQUEST_ENTITY_TOO_LARGE.phrase, status=413, content_type="text/plain")
        if unsafe is not None:
            if is_api:
                return _json_error(400, _error_payload(unsafe))
            return HttpResponse(f"{unsafe.field}: {unsafe.message}", status=400, content_type="text/plain; charset=utf-8")
        response = self.get_response(request)
        # Django's own error pages (unknown URL, 400, 413) become JSON; DRF's answers keep their
        # renderer (the browsable API still shows its errors as a page to a browser).
        if is_api and response.status_code >= 400 and not isinstance(response, Response) and not _is_json(response):
            return _json_error(response.status_code, {"detail": HTTPStatus(response.status_code).phrase})
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        """An API that still crashes answers JSON (the error is logged with its traceback).
        Django's own "not found", "forbidden" and "bad request" exceptions are not crashes: they
        are left to Django, whose answer ``__call__`` turns into JSON."""
        if not request.path.startswith(API_PREFIX):
            return None
        if isinstance(exception, (Http404, PermissionDenied, BadRequest, SuspiciousOperation)):
            return None
        logger.error("unhandled error in %s %s", request.method, request.path, exc_info=exception)
        return _json_error(500, {"detail": "internal server error"})


# A file upload's form fields and boundaries, on top of the file itself.
UPLOAD_FORM_OVERHEAD_BYTES = 64 * 1024
# Paths that take files: a multipart POST to ``…/documents/`` (docs/documents.md).
UPLOAD_PATH_SUFFIX = "/documents/"


def _body_limit(request: HttpRequest, is_api: bool) -> int | None:
    """The largest body this request may send: DOCUMENT_MAX_UPLOAD_MB for a file upload,
    INPUT_MAX_BODY_BYTES for any other API request, Django's own limits elsewhere."""
    if (request.method == "POST" and request.path.endswith(UPLOAD_PATH_SUFFIX)
            and request.content_type == "multipart/form-data"):
        return settings.DOCUMENT_MAX_UPLOAD_BYTES + UPLOAD_FORM_OVERHEAD_BYTES
    return INPUT_MAX_BODY_BYTES if is_api else None


def _content_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0


def _is_json(response: HttpResponse) -> bool:
    return response.get("Content-Type", "").split(";")[0].strip().endswith("json")

