"""`manage.py evaluate_retrieval`: recall@5, recall@10 and MRR per layer and overall, and leaks,
on the shipped month story (evaluation/month_story.json)."""
from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError

from evaluation.runner import DATASET, evaluate, load_dataset, select


class Command(BaseCommand):
    help = "Import the month story into throw-away firms and measure retrieval quality (rolled back)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", default=str(DATASET), help="Path to a dataset in the same format.")
        parser.add_argument("--strategy", default="layered", help="A registered search strategy.")
        parser.add_argument("--conversations", help="Comma-separated conversation ids: evaluate a slice.")
        parser.add_argument("--verbose-misses", action="store_true",
                            help="List labelled messages that have a note but were not recalled.")
        parser.add_argument("--keep", action="store_true", help="Commit the imported firms instead of rolling back.")

    def handle(self, *args, **options) -> None:
        try:
            data = load_dataset(options["dataset"])
        except (OSError, ValueError) as error:
            raise CommandError(f"cannot read the dataset: {error}") from None
        if options["conversations"]:
            data = select(data, conversations=options["conversations"].split(","))

        def progress(done: int, total: int) -> None:
            if total and (done == total or done % 10 == 0):
                self.stderr.write(f"  imported turns {done}/{total}")

        report = evaluate(data, strategy=options["strategy"], keep=options["keep"], progress=progress)
        for line in report.lines():
            self.stdout.write(line)
        if options["verbose_misses"]:
            for line in report.misses():
                self.stdout.write(line)
        self.stdout.write(f"leaks: {report.leaks}")
        if report.leaks:
            sys.exit(1)
