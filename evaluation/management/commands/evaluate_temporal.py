"""``manage.py evaluate_temporal [--split dev|dev_advised|test] [--misses] [--dates]``: does recall
answer "what was true then"? (evaluation/temporal_scoring.py); with ``--dates``, are the dates the
messages state read and placed on the matter chronology (evaluation/temporal_dates.py). Imports
into a throw-away firm, rolled back."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation import temporal_scoring


class Command(BaseCommand):
    help = "Score recall on the temporal set: past values, as-of questions and current values, beside raw baselines."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--split", default="dev", choices=temporal_scoring.SPLITS,
                            help="dev (to tune on) or test (report only).")
        parser.add_argument("--misses", action="store_true", help="List the questions the product missed at rank 1.")
        parser.add_argument("--dates", action="store_true",
                            help="Score the dates in the words instead: reading precision and recall, and the "
                                 "chronology's share of stated dated facts (dev and test).")

    def handle(self, *args, **options) -> None:
        try:
            if options["dates"]:
                from evaluation.temporal_dates import score_dates

                report = score_dates(options["split"])
            else:
                report = temporal_scoring.score(options["split"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        for line in report.lines():
            self.stdout.write(line)
        if options["misses"]:
            for miss in report.misses:
                self.stdout.write(f"MISS {miss}")
