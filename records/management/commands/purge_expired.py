"""``manage.py purge_expired [--dry-run] [--schedule]``: the retention purge (docs/records.md).

Erases closed matters past their firm's retention period, except those on legal hold (listed
as kept). ``--dry-run`` lists what would go; ``--schedule`` enqueues the background job that
runs the purge periodically (``make run`` does this at start).
"""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext

from memory.labels import format_counts

from records.services.retention import PurgeReport, purge_expired
from records.tasks import schedule_retention


class Command(BaseCommand):
    help = "Purge closed matters past their firm's retention period (legal holds are kept)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--dry-run", action="store_true", help="list what would be purged; change nothing")
        parser.add_argument("--schedule", action="store_true", help="enqueue the periodic purge job and exit")

    def handle(self, *args, **options) -> None:
        if options["schedule"]:
            queued = schedule_retention()
            self.stdout.write(gettext("retention purge job enqueued") if queued
                              else gettext("retention purge job already waiting"))
            return
        report = purge_expired(dry_run=options["dry_run"])
        for line in report_lines(report):
            self.stdout.write(line)
        if report.failed:
            raise CommandError(gettext("%(count)s matter(s) could not be purged (see above)") % {
                "count": len(report.failed)})


def report_lines(report: PurgeReport) -> list[str]:
    """What ``PurgeReport.lines`` says, in the reader's language (zh-Hans by default, or English)."""
    would = gettext("would purge matter %(matter)s (closed %(closed)s): %(counts)s")
    done = gettext("purged matter %(matter)s (closed %(closed)s): %(counts)s")
    out = [(would if report.dry_run else done) % {
        "matter": m.reference or m.pk, "closed": f"{m.closed_at:%Y-%m-%d}",
        "counts": format_counts({name: value for name, value in counts.items() if value})}
        for m, counts in report.purged]
    out += [gettext("kept matter %(matter)s (closed %(closed)s): legal hold — %(reason)s") % {
        "matter": m.reference or m.pk, "closed": f"{m.closed_at:%Y-%m-%d}", "reason": m.legal_hold_reason}
        for m in report.held]
    out += [gettext("failed matter %(matter)s: %(error)s") % {"matter": m.reference or m.pk, "error": error}
            for m, error in report.failed]
    return out or [gettext("nothing is past its retention period")]
