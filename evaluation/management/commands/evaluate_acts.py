"""``manage.py evaluate_acts``: how well the rule reader tells a fact from a wish, a plan and a
preference, beside a learned baseline over the same sentences (evaluation/acts_scoring.py;
reads no database)."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from evaluation import acts_scoring


class Command(BaseCommand):
    help = "Score the act reader (fact / wish / plan / preference) on the act set, beside a learned baseline."

    def handle(self, *args, **options) -> None:
        for report in acts_scoring.score():
            for line in report.lines():
                self.stdout.write(line)
