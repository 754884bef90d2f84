"""``manage.py evaluate_citations [--split dev|test] [--misses] [--answers] [--live]``: does the
answer check keep the markers that point to a supporting source and mark the sentences that have
none (evaluation/attribution_scoring.py; reads no database); with ``--answers``, does the
offline answer say "memory holds nothing" where it should (imports the split, rolled back); with
``--live``, the same questions asked of the configured LLM and its answers checked
(evaluation/attribution_live.py)."""
from __future__ import annotations

from django.core.management.base import BaseCommand

from evaluation import attribution_scoring


class Command(BaseCommand):
    help = "Score the answer check (markers kept and removed, sentences marked) on the attribution set."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--split", default="dev", choices=attribution_scoring.SPLITS,
                            help="dev (to tune on) or test (report only).")
        parser.add_argument("--misses", action="store_true", help="List every sentence a figure missed.")
        parser.add_argument("--answers", action="store_true",
                            help="Also import the conversations (offline engine, rolled back) and ask every "
                                 "question: the share answered 'memory holds nothing'.")
        parser.add_argument("--live", action="store_true",
                            help="Ask the questions of the configured LLM (LLM_BASE_URL) through the chat's turn "
                                 "and check its answers (rolled back).")
        parser.add_argument("--limit", type=int, default=None, help="With --live: only the first N questions.")
        parser.add_argument("--stride", type=int, default=1,
                            help="With --live: every N-th question (a sample across the conversations).")
        parser.add_argument("--walled", type=int, default=8,
                            help="With --live: how many answerable questions bob (not assigned) asks too.")

    def handle(self, *args, **options) -> None:
        if options["live"]:
            self._live(options)
            return
        report = attribution_scoring.score(options["split"])
        for line in report.lines():
            self.stdout.write(line)
        if options["misses"]:
            for miss in report.misses():
                self.stdout.write(f"MISS {miss}")
        if options["answers"]:
            nothing = attribution_scoring.score_nothing(options["split"])
            for line in nothing.lines():
                self.stdout.write(line)
            if options["misses"]:
                for miss in nothing.misses():
                    self.stdout.write(f"MISS {miss}")

    def _live(self, options) -> None:
        from evaluation.attribution_live import score_live

        def progress(done: int, whole: int, line: str) -> None:
            self.stderr.write(f"{done}/{whole} {line}")

        report = score_live(options["split"], limit=options["limit"], stride=options["stride"],
                            walled=options["walled"], progress=progress)
        for line in report.lines():
            self.stdout.write(line)
        if options["misses"]:
            for miss in report.misses():
                self.stdout.write(f"MISS {miss}")
