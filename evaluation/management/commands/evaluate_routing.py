"""`manage.py evaluate_routing`: supersede precision and recall, a confusion table and every
wrong pair, on the labelled routing pairs (evaluation/routing_pairs.json)."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from evaluation.routing import PAIRS, evaluate_routing, load_pairs


class Command(BaseCommand):
    help = "Route labelled note pairs through the real routing path in a throw-away firm (rolled back)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--pairs", default=str(PAIRS), help="Path to a pairs file in the same format.")
        parser.add_argument("--held-out-only", action="store_true", help="Evaluate only the held-out pairs.")
        parser.add_argument("--keep", action="store_true", help="Commit the throw-away firm instead of rolling back.")

    def handle(self, *args, **options) -> None:
        try:
            data = load_pairs(options["pairs"])
        except (OSError, ValueError) as error:
            raise CommandError(f"cannot read the routing pairs: {error}") from None
        if options["held_out_only"]:
            data = {**data, "pairs": [p for p in data["pairs"] if p.get("held_out")]}
            if not data["pairs"]:
                raise CommandError("the pairs file marks no pair as held out")
        report = evaluate_routing(data, keep=options["keep"])
        for line in report.lines():
            self.stdout.write(line)
