"""Structured logs (docs/operations.md, "Logs"): one line per HTTP request, websocket
connection, chat turn and background job, with the ids that tie them together and never the
text of a note or a message.

``LOG_FORMAT=json`` (the default under ``LEGALMEM_PRODUCTION``) writes each line as one JSON
object, ``text`` (the default in development) as a readable line with ``key=value`` fields.
"""
from infra.logs.context import bind, bound_ids
from infra.logs.events import content_lengths, log_event

__all__ = ["bind", "bound_ids", "content_lengths", "log_event"]
