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
from django.utils.translation import gettext, gettext_lazy
from tqdm import tqdm

from memory.models import RoutingDecision, TurnExtraction
from remember.ingest import ImportResult, TranscriptError, import_transcript


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Import conversations from a JSON transcript (idempotent: re-importing changes nothing).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help=gettext_lazy("path to the JSON transcript"))
        parser.add_argument("--firm", help=gettext_lazy("the firm's slug, if the file does not name it"))
        parser.add_argument("--no-progress", action="store_true", help=gettext_lazy("no progress bar"))
        parser.add_argument("--per-turn", action="store_true",
                            help=gettext_lazy(
                                "run each turn on its own (the chat's path) instead of the bulk path; same results"
                            ))

    def handle(self, *args, **options) -> None:
        path = Path(options["file"])
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CommandError(gettext("%(path)s: no such file") % {"path": path}) from None
        except UnicodeDecodeError as exc:
            raise CommandError(gettext("%(path)s: not UTF-8 text (%(reason)s)") % {"path": path, "reason": exc.reason}) from None
        except RecursionError:
            raise CommandError(gettext("%(path)s: the JSON is nested too deeply") % {"path": path}) from None
        except json.JSONDecodeError as exc:
            raise CommandError(gettext("%(path)s: not valid JSON (line %(line)s, column %(column)s: %(error)s)") % {
                "path": path, "line": exc.lineno, "column": exc.colno, "error": exc.msg}) from None
        bar = None if options["no_progress"] else tqdm(total=0, unit="turn", desc=gettext("importing"), file=self.stderr._out)

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
            self.stdout.write(self.style.SUCCESS(summary(result)))
            return
        self.stdout.write(summary(result))
        for failure in result.failures[:MAX_LISTED_FAILURES]:
            self.stderr.write(f"  {failure.turn} [{failure.status}]: {_shorten(failure.error)}")
        if len(result.failures) > MAX_LISTED_FAILURES:
            self.stderr.write(gettext("  … and %(count)s more (see the turn jobs in admin)") % {
                "count": len(result.failures) - MAX_LISTED_FAILURES})
        raise CommandError(gettext(
            "%(failed)s of %(turns)s turn(s) failed extraction; their messages are stored, "
            "the worker retries the pending ones and re-importing the file runs them again"
        ) % {"failed": len(result.failures), "turns": result.turns})


MAX_LISTED_FAILURES = 20


def summary(result: ImportResult) -> str:
    """``ImportResult.summary`` and the time taken, in the reader's language."""
    retried = sum(f.status == TurnExtraction.Status.PENDING for f in result.failures)
    decisions = ", ".join(f"{_action(kind)} {count}" for kind, count in sorted(result.decisions.items()))
    return gettext(
        "firm %(firm)s: %(conversations)s conversation(s) (%(conversations_created)s new), "
        "%(messages_created)s message(s) new, %(messages_existing)s already there, "
        "%(messages_indexed)s embedded for search; %(turns)s turn(s), %(turns_processed)s processed now; "
        "extraction: %(succeeded)s succeeded (done %(done)s, skipped %(skipped)s), %(failed)s failed "
        "(%(failed_for_good)s for good, %(retried)s to be retried by the worker), %(pending)s still pending; "
        "notes written %(notes)s; decisions: %(decisions)s (%(seconds)s s)"
    ) % {
        "firm": result.firm, "conversations": result.conversations,
        "conversations_created": result.conversations_created, "messages_created": result.messages_created,
        "messages_existing": result.messages_existing, "messages_indexed": result.messages_indexed,
        "turns": result.turns, "turns_processed": result.turns_processed, "succeeded": result.succeeded,
        "done": result.turn_status.get(TurnExtraction.Status.DONE, 0),
        "skipped": result.turn_status.get(TurnExtraction.Status.SKIPPED, 0), "failed": len(result.failures),
        "failed_for_good": len(result.failures) - retried, "retried": retried, "pending": result.pending,
        "notes": result.notes_written, "decisions": decisions or gettext("none"),
        "seconds": f"{result.seconds:.1f}",
    }


def _action(kind: str) -> str:
    """A routing decision's kind in words (``add`` → 新增)."""
    return str(RoutingDecision.Action(kind).label) if kind in RoutingDecision.Action.values else kind


def _shorten(error: str, limit: int = 240) -> str:
    line = " ".join(error.split())
    return line if len(line) <= limit else line[:limit] + "…"
