"""``manage.py index_messages``: embed every message still without an embedding (backfill).

``make run`` runs it before the worker starts, so a database created before messages were
searchable, or messages a crashed worker left, become fully searchable (they are found by
keywords meanwhile). Safe to run any time, from any process; re-running does nothing new.
"""
from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from infra.logs.jobs import job_run
from infra.embeddings import EmbeddingUnavailable
from remember.message_index import index_messages, pending_messages


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Embed the messages that have no embedding yet (in batches of MESSAGE_INDEX_BATCH).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--limit", type=int, default=None, help=gettext_lazy("embed at most this many now"))

    def handle(self, *args, **options) -> None:
        limit = options["limit"]
        if limit is not None and limit < 1:
            raise CommandError(gettext("--limit must be a positive number"))
        waiting = pending_messages().count()
        started = time.perf_counter()
        try:
            with job_run("index_messages") as run:
                done = index_messages(limit=limit)
                run.note(messages=done, waiting=waiting)
        except EmbeddingUnavailable as error:
            raise CommandError(gettext("the embedding service failed (%(error)s); the messages stay queued")
                               % {"error": error}) from None
        seconds = time.perf_counter() - started
        numbers = {"done": done, "waiting": waiting, "seconds": f"{seconds:.1f}", "left": pending_messages().count()}
        if done and seconds > 0:
            self.stdout.write(gettext("embedded %(done)s of %(waiting)s waiting message(s) in %(seconds)s s, "
                                      "%(rate)s messages/s; %(left)s still waiting")
                              % {**numbers, "rate": f"{done / seconds:.0f}"})
        else:
            self.stdout.write(gettext("embedded %(done)s of %(waiting)s waiting message(s) in %(seconds)s s; "
                                      "%(left)s still waiting") % numbers)
