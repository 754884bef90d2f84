"""Structured logs (docs/operations.md, "Logs"): one line per HTTP request, websocket
connection, chat turn and background job, with the ids that tie them together and never the
text of a note or a message.

``LOG_FORMAT=json`` (the default under ``LEGALMEM_PRODUCTION``) writes each line as one JSON
object, ``text`` (the default in development) as a readable line with ``key=value`` fields.
"""
from legalmem_site.logs.context import bind, bound_ids
from legalmem_site.logs.events import content_lengths, log_event

__all__ = ["bind", "bound_ids", "content_lengths", "log_event"]
