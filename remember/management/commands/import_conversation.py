"""``manage.py import_conversation FILE [--firm SLUG]``: import a transcript through the write path.

The JSON format is documented in :mod:`remember.ingest`. The summary says how many
turns' extraction succeeded, failed (for good, or to be retried by the worker) and are still
pending; when any failed, their errors are listed (shortened) and the exit status is 1 — the
messages themselves are stored either way, and a re-import runs only the unfinished turns.
Turns run through the bulk path (``remember.bulk``); ``--per-turn`` runs them one by
one as the chat does — the same notes either way (docs/performance.md).
"""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from remember.ingest import TranscriptError, import_transcript


class Command(BaseCommand):
    help = "Import conversations from a JSON transcript (idempotent: re-importing changes nothing)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help="path to the JSON transcript")
        parser.add_argument("--firm", help="the firm's slug, if the file does not name it")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")
        parser.add_argument("--per-turn", action="store_true",
                            help="run each turn on its own (the chat's path) instead of the bulk path; same results")

    def handle(self, *args, **options) -> None:
        path = Path(options["file"])
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CommandError(f"{path}: no such file") from None
        except UnicodeDecodeError as exc:
            raise CommandError(f"{path}: not UTF-8 text ({exc.reason})") from None
        except RecursionError:
            raise CommandError(f"{path}: the JSON is nested too deeply") from None
        except json.JSONDecodeError as exc:
            raise CommandError(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})") from None
        bar = None if options["no_progress"] else tqdm(total=0, unit="turn", desc="importing", file=self.stderr._out)

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar.total = total
                bar.n = done
                bar.refresh()

        try:
            result = import_transcript(data, actor="system:import_conversation", progress=progress, firm=options["firm"],
                                       bulk=not options["per_turn"])
        except TranscriptError as exc:
            raise CommandError(f"{path}: {exc}") from None
        finally:
            if bar is not None:
                bar.close()
        if not result.failures:
            self.stdout.write(self.style.SUCCESS(result.summary()) + f" ({result.seconds:.1f} s)")
            return
        self.stdout.write(result.summary() + f" ({result.seconds:.1f} s)")
        for failure in result.failures[:MAX_LISTED_FAILURES]:
            self.stderr.write(f"  {failure.turn} [{failure.status}]: {_shorten(failure.error)}")
        if len(result.failures) > MAX_LISTED_FAILURES:
            self.stderr.write(f"  … and {len(result.failures) - MAX_LISTED_FAILURES} more (see the turn jobs in admin)")
        raise CommandError(
            f"{len(result.failures)} of {result.turns} turn(s) failed extraction; their messages are stored, "
            "the worker retries the pending ones and re-importing the file runs them again"
        )


MAX_LISTED_FAILURES = 20


def _shorten(error: str, limit: int = 240) -> str:
    line = " ".join(error.split())
    return line if len(line) <= limit else line[:limit] + "…"
