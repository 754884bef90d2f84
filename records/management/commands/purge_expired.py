"""``manage.py purge_expired [--dry-run] [--schedule]``: the retention purge (docs/records.md).

Erases closed matters past their firm's retention period, except those on legal hold (listed
as kept). ``--dry-run`` lists what would go; ``--schedule`` enqueues the background job that
runs the purge periodically (``make run`` does this at start).
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from records.services.retention import purge_expired
from records.tasks import schedule_retention


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Purge closed matters past their firm's retention period (legal holds are kept).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true",
                            help=gettext_lazy("list what would be purged; change nothing"))
        parser.add_argument("--schedule", action="store_true",
                            help=gettext_lazy("enqueue the periodic purge job and exit"))

    def handle(self, *args, **options) -> None:
        if options["schedule"]:
            queued = schedule_retention()
            self.stdout.write(gettext("retention purge job enqueued") if queued
                              else gettext("retention purge job already waiting"))
            return
        report = purge_expired(dry_run=options["dry_run"])
        for line in report.lines():
            self.stdout.write(line)
        if report.failed:
            raise CommandError(gettext("%(count)s matter(s) could not be purged (see above)") % {
                "count": len(report.failed)})

