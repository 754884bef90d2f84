"""``manage.py evaluate_notes [--split dev|dev2|outside_dev|test] [--engine offline|llm] [--conversations d01,d02]
[--misses] [--show d06] [--unjudged FILE]``: are the notes true to what was said
(evaluation/note_truth_scoring.py). Imports into throw-away firms, rolled back.

``--engine offline`` (the default) sends no LLM request, whatever ``LLM_BASE_URL`` says;
``--engine llm`` extracts with the server of ``LLM_BASE_URL`` and fails (exit 1) when none is
configured, when it does not answer, or when any turn was not extracted by it."""
from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from evaluation import note_truth_scoring
from evaluation.note_judgements import write_unjudged


# The folders of evaluation/note_truth/: four to tune on (dev written in-house, dev2 and
# dev3 written later around corrections, outside_dev the outside set's conversations annotated)
# and test, to report only.
SPLITS = ("dev", "dev2", "dev3", "dev4", "dev5", "outside_dev", "test", "test2")


class Command(BaseCommand):
    help = "Score the notes the write path makes on the note-truth set (facts, corrections, subjects)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--split", default="dev", choices=SPLITS,
                            help="dev, dev2, dev3, outside_dev (to tune on) or test (report only).")
        parser.add_argument("--engine", default="offline", choices=note_truth_scoring.ENGINES,
                            help="offline (default: no LLM request) or llm (the server of LLM_BASE_URL).")
        parser.add_argument("--conversations", default="", metavar="IDS",
                            help="Only these conversations, comma-separated (e.g. d01,d02); default all.")
        parser.add_argument("--misses", action="store_true", help="List the facts and corrections missed.")
        parser.add_argument("--unjudged", metavar="FILE",
                            help="Write the notes no reader has judged yet, with their sources (note_truth/JUDGING.md).")
        parser.add_argument("--show", metavar="CONVERSATION", help="List the notes of one conversation (e.g. d06).")

    def handle(self, *args, **options) -> None:
        conversations = [name.strip() for name in options["conversations"].split(",") if name.strip()]
        started = time.perf_counter()

        def progress(done: int, total: int) -> None:
            if done and options["engine"] == "llm":
                self.stderr.write(f"[evaluate_notes] turn {done}/{total} after {time.perf_counter() - started:.0f} s")

        try:
            report = note_truth_scoring.score(options["split"], engine=options["engine"],
                                              conversations=conversations or None, progress=progress)
        except (ValueError, note_truth_scoring.EngineUnavailable) as exc:
            raise CommandError(str(exc)) from exc
        for line in report.lines():
            self.stdout.write(line)
        if options["misses"]:
            for miss in report.misses:
                self.stdout.write(f"MISS {miss}")
        if options["unjudged"]:
            write_unjudged(Path(options["unjudged"]), options["split"], report.precision)
            self.stdout.write(f"{len(report.precision.unjudged)} unjudged note(s) written to {options['unjudged']}")
        for conversation, status, text in report.listing:
            if options["show"] and options["show"] in ("all", conversation):
                self.stdout.write(f"{conversation:<4} {status:<10} {text}")
        if options["engine"] == "llm":
            not_llm = {key: count for key, count in report.turn_engines.items()
                       if not (key.startswith("llm:") and key.endswith(" done")) and not key.startswith("skipped ")}
            if not_llm:
                raise CommandError(f"{sum(not_llm.values())} of {report.turns} turn(s) were not extracted by the "
                                   f"LLM: {not_llm}")
