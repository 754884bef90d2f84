"""``manage.py evaluate_temporal [--split dev|dev_advised|test] [--misses]``: does recall answer "what was
true then"? (evaluation/temporal_scoring.py). Imports into a throw-away firm, rolled back."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation import temporal_scoring


class Command(BaseCommand):
    help = "Score recall on the temporal set: past values, as-of questions and current values, beside raw baselines."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--split", default="dev", choices=temporal_scoring.SPLITS,
                            help="dev (to tune on) or test (report only).")
        parser.add_argument("--misses", action="store_true", help="List the questions the product missed at rank 1.")

    def handle(self, *args, **options) -> None:
        try:
            report = temporal_scoring.score(options["split"])
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        for line in report.lines():
            self.stdout.write(line)
        if options["misses"]:
            for miss in report.misses:
                self.stdout.write(f"MISS {miss}")
