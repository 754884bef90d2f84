"""``manage.py resume_turn_extractions``: re-enqueue turn jobs a dead worker left behind.

Run it before starting workers (and any time): jobs ``running`` whose worker is gone (its pid
no longer exists on this host, its heartbeat is stale, or past ``TURN_LEASE_SECONDS``; see
infra/workers.py) or ``pending`` with a lost task get a new background task. Every
finished turn task, and every ``run_worker`` watchdog round, also does this for up to 10 jobs.
"""
from __future__ import annotations

from django.core.management.base import BaseCommand
from django.utils.translation import gettext, gettext_lazy

from remember.turns import resume_stalled_turns


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Re-enqueue turn extraction jobs left running by a dead worker or whose task was lost.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--limit", type=int, default=1000,
                            help=gettext_lazy("re-enqueue at most this many jobs (default %(default)s)"))

    def handle(self, *args, **options) -> None:
        ids = resume_stalled_turns(limit=options["limit"])
        if ids:
            self.stdout.write(gettext("re-enqueued %(count)s turn extraction job(s): %(ids)s") % {
                "count": len(ids), "ids": ids})
        else:
            self.stdout.write(gettext("re-enqueued %(count)s turn extraction job(s)") % {"count": 0})
