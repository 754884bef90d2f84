"""``manage.py replay_erasures [--journal FILE …]``: erase again, after a restore, every erasure
the journal names (records.journal; ``make restore`` runs it). An erasure whose rows are already
gone (the backup was made after it) changes nothing; each replay leaves its own tombstone and
the touched tables are rewritten once at the end (docs/records.md, "Backups and the replay").
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand
from django.utils.translation import gettext, gettext_lazy

from memory.models import Firm, Matter
from records import journal
from records.erasure import ErasureError, erase
from records.erasure_plan import replay_unit
from records.services.compaction import compact_after_erasure


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Erase again, after a restore, what the erasure journal says was erased.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--journal", action="append", default=[],
                            help=gettext_lazy("a journal file besides the data folder's erasures.jsonl; repeatable"))

    def handle(self, *args, **options) -> None:
        seen, replayed = set(), 0
        for path in [journal.journal_path(), *map(Path, options["journal"])]:
            for entry in journal.entries(path):
                if entry["tombstone"] in seen or not Firm.objects.filter(pk=entry["firm"]).exists():
                    continue
                seen.add(entry["tombstone"])
                replayed += self._replay(entry)
        if replayed:
            compact_after_erasure()
        self.stdout.write(gettext("replayed %(replayed)s of %(total)s erasures from the journal") % {
            "replayed": replayed, "total": len(seen)})

    def _replay(self, entry: dict) -> int:
        if entry.get("matter") and Matter.objects.filter(pk=entry["matter"], erased_at__isnull=False).exists():
            return 0
        try:
            result = erase(replay_unit(entry), actor="system:erase",
                           reason=f"replay of erasure {entry['tombstone']} after a restore")
        except ErasureError:  # nothing of it in this database: the backup was made after it
            return 0
        if result.already_erased:
            return 0
        self.stdout.write(result.message)
        return 1
