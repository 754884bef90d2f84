"""``manage.py evaluate_notes [--split dev|dev2|outside_dev|test] [--misses]``: are the notes true to what was said
(showcase/evaluation/note_truth_scoring.py). Imports into throw-away firms, rolled back."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from showcase.evaluation import note_truth_scoring


# The folders of showcase/evaluation/note_truth/: three to tune on (dev written in-house, dev2
# written later around corrections, outside_dev the outside set's conversations annotated) and
# test, to report only.
SPLITS = ("dev", "dev2", "outside_dev", "test")


class Command(BaseCommand):
    help = "Score the notes the write path makes on the note-truth set (facts, corrections, subjects)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--split", default="dev", choices=SPLITS,
                            help="dev, dev2, outside_dev (to tune on) or test (report only).")
        parser.add_argument("--misses", action="store_true", help="List the facts and corrections missed.")
        parser.add_argument("--show", metavar="CONVERSATION", help="List the notes of one conversation (e.g. d06).")

    def handle(self, *args, **options) -> None:
        report = note_truth_scoring.score(options["split"])
        for line in report.lines():
            self.stdout.write(line)
        if options["misses"]:
            for miss in report.misses:
                self.stdout.write(f"MISS {miss}")
        for conversation, status, text in report.listing:
            if options["show"] and conversation == options["show"]:
                self.stdout.write(f"{status:<10} {text}")
