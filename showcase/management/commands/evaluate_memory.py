"""`manage.py evaluate_memory`: the multi-session set (showcase/evaluation/multisession/) through
import + search, scored beside the raw-message baselines (dense, BM25, RRF) in the same run."""
from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from showcase.evaluation.multisession import CATEGORIES, HERE, load_set
from showcase.evaluation.multisession.runner import run_evaluation


class Command(BaseCommand):
    help = ("Import the multi-session evaluation set into throw-away firms (rolled back) and print "
            "recall_all@5/@10 and MRR per category and language: product vs raw dense, BM25 and RRF.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dataset", default=str(HERE), help="Folder with world.json, transcript-*.json, questions.json.")
        parser.add_argument("--strategy", default="layered", help="A registered search strategy.")
        parser.add_argument("--category", action="append", choices=CATEGORIES,
                            help="Only this category (repeatable).")
        parser.add_argument("--limit", type=int, help="At most this many questions per category and language.")
        parser.add_argument("--sessions", help="Comma-separated session ids: import only these (questions follow).")
        parser.add_argument("--json", dest="json_path", help="Write every figure and per-question result here.")
        parser.add_argument("--losses", action="store_true",
                            help="List the questions raw RRF answers within 10 and the product does not.")
        parser.add_argument("--show", action="append", metavar="QID",
                            help="Print this question's product top 10 (kind, message ids, text) and raw RRF's (repeatable).")
        parser.add_argument("--keep", action="store_true", help="Commit the imported firms instead of rolling back.")

    def handle(self, *args, **options) -> None:
        try:
            data = load_set(options["dataset"])
        except (OSError, ValueError, KeyError) as error:
            raise CommandError(f"cannot read the evaluation set: {error}") from None
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit must be a positive number")
        sessions = options["sessions"].split(",") if options["sessions"] else None
        data = data.select(sessions=sessions, categories=options["category"], limit=options["limit"])
        if not data.questions:
            raise CommandError("no question left after --sessions/--category/--limit")

        def progress(done: int, total: int) -> None:
            if total and (done == total or done % 25 == 0):
                self.stderr.write(f"  imported turns {done}/{total}")

        report = run_evaluation(data, strategy=options["strategy"], keep=options["keep"], progress=progress)
        for line in report.lines():
            self.stdout.write(line)
        if options["losses"]:
            for line in report.losses():
                self.stdout.write(line)
        for question_id in options["show"] or ():
            for line in report.show(question_id):
                self.stdout.write(line)
        if options["json_path"]:
            Path(options["json_path"]).write_text(
                json.dumps(report.as_json(), ensure_ascii=False, indent=1), encoding="utf-8")
            self.stdout.write(f"figures written to {options['json_path']}")
        self.stdout.write(f"leaks: {report.leaks}")
        if report.leaks:
            sys.exit(1)
