"""``manage.py import_matter FILE --firm SLUG --user NAME [--reference REF]``: read back a JSON
export of ``export_matter`` into a firm as a new matter (docs/records.md, the round trip)."""
from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from records.lookup import RecordLookupError, firm_by_slug, user_by_name
from records.services.matter_bundle import BundleError, is_bundle, read_bundle
from records.services.matter_transfer import TransferError, import_matter


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext(
            "Import a matter exported with export_matter --format json or bundle (a bundle brings its documents)."
        )

    def add_arguments(self, parser) -> None:
        parser.add_argument("file", help=gettext_lazy("the export: a JSON file or a bundle (.zip)"))
        parser.add_argument("--firm", required=True, help=gettext_lazy("the firm's slug to import into"))
        parser.add_argument("--user", required=True,
                            help=gettext_lazy(
                                "member who receives conversations and notes of users the firm does not have"
                            ))
        parser.add_argument("--reference", help=gettext_lazy("the new matter's reference (default: the exported one)"))

    def handle(self, *args, **options) -> None:
        path = Path(options["file"])
        files = None
        try:
            if is_bundle(path):
                document, files = read_bundle(path)
            else:
                document = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise CommandError(gettext("%(path)s: no such file") % {"path": path}) from None
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CommandError(gettext("%(path)s: not a JSON export (%(error)s)") % {"path": path, "error": exc}) from None
        except BundleError as exc:
            raise CommandError(f"{path}: {exc}") from None
        try:
            firm = firm_by_slug(options["firm"])
            user = user_by_name(options["user"])
            matter = import_matter(document, firm=firm, actor=user, fallback_user=user, reference=options["reference"],
                                   files=files)
        except (RecordLookupError, TransferError) as exc:
            raise CommandError(f"{path}: {exc}") from None
        self.stdout.write(self.style.SUCCESS(
            gettext("imported matter %(matter)s into %(firm)s: %(notes)s notes, %(documents)s documents") % {
                "matter": matter.reference or matter.pk, "firm": firm.slug, "notes": matter.notes.count(),
                "documents": matter.documents.count()}
        ))
