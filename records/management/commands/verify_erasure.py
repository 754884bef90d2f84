"""``manage.py verify_erasure TOMBSTONE [--folder PATH …] [--no-data-folder]``.

Looks for the erased content's fingerprints (kept in the tombstone, never the content) in every
text column of the database, every file of the data folder (backups opened on the fly) and any
log folder given, and prints where anything remains; exits 1 if something does
(docs/records.md, "Verifying an erasure").
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from memory.models import AuditLog
from records.verification import NoFingerprints, verify


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext(
            "Check that nothing of an erasure's content remains in the database, the data folder or the logs."
        )

    def add_arguments(self, parser) -> None:
        parser.add_argument("tombstone", type=int,
                            help=gettext_lazy("the erasure's audit entry id (its tombstone)"))
        parser.add_argument("--folder", action="append", default=[],
                            help=gettext_lazy("another folder to scan (a log folder, a backup folder); repeatable"))
        parser.add_argument("--no-data-folder", action="store_true",
                            help=gettext_lazy(
                                "skip the data folder (the database and any --folder are still scanned)"
                            ))

    def handle(self, *args, **options) -> None:
        tombstone = AuditLog.objects.filter(pk=options["tombstone"]).first()
        if tombstone is None:
            raise CommandError(gettext("no audit entry %(id)s") % {"id": options["tombstone"]})
        folders = [*([] if options["no_data_folder"] else [Path(settings.DATA_DIR)]), *map(Path, options["folder"])]
        try:
            verdict = verify(tombstone, folders=folders)
        except NoFingerprints as exc:
            raise CommandError(str(exc)) from None
        style = self.style.SUCCESS if verdict.clean else self.style.ERROR
        self.stdout.write(style("\n".join(verdict.lines())))
        if not verdict.clean:
            raise SystemExit(1)
