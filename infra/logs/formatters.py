"""Two formatters for the same records: one JSON object per line (for a log collector) and a
readable line (for a terminal). Both add the bound ids and an event's fields.

Written here rather than taken from a library (python-json-logger): forty lines, no new
dependency, and exactly the guarantees the tests check — one line per record, valid JSON
whatever the values, fixed key names."""
from __future__ import annotations

import json
import logging
from datetime import datetime, timezone
from typing import Any

from infra.logs.context import bound_ids

_RESERVED = ("ts", "level", "logger", "message")


def record_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The bound ids of the record's context, then the event's own fields (which win)."""
    fields = {**getattr(record, "ids", {}), **getattr(record, "fields", {})}
    return {name: value for name, value in fields.items() if name not in _RESERVED}


class ContextFilter(logging.Filter):
    """Stamps each record with the ids bound where it was written (before a handler in another
    thread — or a later formatter call — could lose the context)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "ids"):
            record.ids = bound_ids()
        return True


class ClientErrorsOneLine(logging.Filter):
    """A refused request (403 Permission denied, 404, 400: the client's error, logged by Django
    with the exception attached) is one line, its status and path — never the traceback of an
    exception that only carried the answer. A server error (5xx) keeps its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info = None
            record.exc_text = None
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (UTC, ms), level, logger, message, event fields, ids and,
    for an exception, its type and traceback."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
            **record_fields(record),
        }
        if record.exc_info:
            line["exc_type"] = record.exc_info[0].__name__ if record.exc_info[0] else None
            line["exc"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exc"] = record.exc_text
        # ensure_ascii: a line stays one line of ASCII whatever a value holds; default=str: a
        # value JSON cannot hold (a UUID, a datetime) is written as its text, never an error.
        return json.dumps(line, ensure_ascii=True, default=str)


class TextFormatter(logging.Formatter):
    """``time LEVEL logger: message key=value …`` for a developer's terminal."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = record_fields(record)
        if not fields:
            return text
        head, newline, rest = text.partition("\n")  # a traceback stays below the fields
        pairs = " ".join(f"{name}={value}" for name, value in fields.items())
        return f"{head} {pairs}{newline}{rest}"

