"""`manage.py evaluate_memory`: every evaluation set through import + search, scored beside the
raw-message baselines (dense, BM25, RRF) in the same run (docs/evaluation.md):

- the consultation set (evaluation/consultations/), written by someone who never read
  the ranking code, split into dev and test before any tuning: one table per split, the test
  table is the one reported;
- the multi-session set (evaluation/multisession/), written by the people who tuned the
  ranking: a second dev set.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation.multisession import CATEGORIES, HERE, SPLITS, load_set
from evaluation.multisession.runner import MemoryReport, run_evaluation

CONSULTATIONS = HERE.parent / "consultations"
OUTSIDE_DEV = HERE.parent / "outside_dev"
DIALOGUE_DEV = HERE.parent / "dialogue_dev"
SETS = {"outside_dev": OUTSIDE_DEV, "consultations": CONSULTATIONS, "multisession": HERE, "dialogue_dev": DIALOGUE_DEV}


class Command(BaseCommand):
    help = ("Import the multi-session evaluation set into throw-away firms (rolled back) and print "
            "recall_all@5/@10 and MRR per category and language: product vs raw dense, BM25 and RRF.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--set", dest="sets", action="append", choices=sorted(SETS),
                            help="Only this set (repeatable; default: every set).")
        parser.add_argument("--dataset", help="Another folder with world.json, transcript-*.json, questions.json "
                                              "(or part_*/ folders and split.json).")
        parser.add_argument("--part", dest="parts", action="append", metavar="PART",
                            help="Only this part of a set written in parts, e.g. part_c (repeatable; "
                                 "each part has firms of its own, so its figures are those it has in the whole set).")
        parser.add_argument("--split", choices=(*SPLITS, "all"), default="all",
                            help="Only this split's questions (sets without splits: all of them).")
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
        if options["limit"] is not None and options["limit"] < 1:
            raise CommandError("--limit must be a positive number")
        folders = ([options["dataset"]] if options["dataset"]
                   else [SETS[name] for name in (options["sets"] or ("outside_dev", "consultations", "multisession", "dialogue_dev"))])
        if options["parts"]:
            whole = [Path(folder).name for folder in folders if not any(Path(folder).glob("part_*"))]
            if whole:
                raise CommandError(f"--part applies only to a set written in parts, not to {', '.join(whole)} "
                                   "(choose the set with --set consultations)")
        figures, leaks = {}, 0
        for folder in folders:
            report = self._evaluate(Path(folder), options, alone=len(folders) == 1)
            if report is None:
                continue
            figures[Path(folder).name] = {split: part.as_json() for split, part in report.items()}
            leaks += sum(part.leaks for part in report.values())
        if not figures:
            raise CommandError("no question left after --sessions/--category/--limit/--split in any set")
        if options["json_path"]:
            Path(options["json_path"]).write_text(json.dumps(figures, ensure_ascii=False, indent=1), encoding="utf-8")
            self.stdout.write(f"figures written to {options['json_path']}")
        self.stdout.write(f"leaks: {leaks}")
        if leaks:
            sys.exit(1)

    def _evaluate(self, folder: Path, options, *, alone: bool) -> dict[str, MemoryReport] | None:
        """One set: import, ask, print a table per split (dev, then test); the reports by split.
        None (the set skipped) when the selection leaves it no question and other sets are run."""
        try:
            data = load_set(folder, parts=options["parts"])
        except (OSError, ValueError, KeyError) as error:
            raise CommandError(f"cannot read the evaluation set {folder}: {error}") from None
        sessions = options["sessions"].split(",") if options["sessions"] else None
        split = None if options["split"] == "all" else options["split"]
        has_splits = any("split" in q for q in data.questions)
        data = data.select(sessions=sessions, categories=options["category"], limit=options["limit"],
                           split=split if has_splits else None)
        if not data.questions:
            if alone:
                raise CommandError(f"{folder.name}: no question left after --sessions/--category/--limit/--split")
            self.stderr.write(f"{folder.name}: no question left after the selection; skipped")
            return None

        def progress(done: int, total: int) -> None:
            if total and (done == total or done % 25 == 0):
                self.stderr.write(f"  imported turns {done}/{total}")

        self.stdout.write(f"== {folder.name} ==")
        report = run_evaluation(data, strategy=options["strategy"], keep=options["keep"], progress=progress,
                                split=options["split"] if has_splits else "dev (no test split: a set to tune on)")
        parts = ({name: report.for_split(name) for name in SPLITS if any(q.get("split") == name for q in data.questions)}
                 if has_splits else {"all": report})
        for name, part in parts.items():
            if has_splits:
                self.stdout.write(f"-- {folder.name}, {name} split ({len(part.outcomes)} questions) --")
            for line in part.lines():
                self.stdout.write(line)
        if options["losses"]:
            for line in report.losses():
                self.stdout.write(line)
        for question_id in options["show"] or ():
            for line in report.show(question_id):
                self.stdout.write(line)
        return parts
