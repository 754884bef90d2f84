"""``manage.py export_matter REF [--firm SLUG] [--user NAME] [--format json|markdown] [--output FILE]``.

Writes a matter's memory as re-importable JSON or a Markdown report (docs/records.md). With
``--user`` the export is made as that user: a matter they are not assigned to is "not found",
as on the web.
"""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from memory.models import Matter
from records.lookup import RecordLookupError, firm_by_slug, matter_by_reference, user_by_name
from records.services.matter_bundle import BUNDLE, write_bundle
from records.services.matter_transfer import FORMATS, TransferError, export_matter, exportable_matter


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext(
            "Export a matter's notes, links, source messages, documents and history (JSON, Markdown or a bundle)."
        )

    def add_arguments(self, parser) -> None:
        parser.add_argument("reference", help=gettext_lazy("the matter's reference (or id)"))
        parser.add_argument("--firm", help=gettext_lazy("the firm's slug (when references repeat across firms)"))
        parser.add_argument("--user", help=gettext_lazy("export as this user (their ethical wall applies)"))
        parser.add_argument("--format", choices=(*FORMATS, BUNDLE), default="json",
                            help=gettext_lazy(
                                "json, markdown, or bundle: a zip of the JSON and the documents' files (needs --output)"
                            ))
        parser.add_argument("--output", help=gettext_lazy("file to write (default: standard output)"))

    def handle(self, *args, **options) -> None:
        try:
            matter = matter_by_reference(options["reference"], firm_by_slug(options["firm"]))
            actor = "system:export_matter"
            if options["user"]:
                actor = user_by_name(options["user"])
                try:
                    matter = exportable_matter(actor, matter.pk)
                except Matter.DoesNotExist:
                    raise CommandError(gettext("no matter '%(reference)s' that %(user)s may see") % {
                        "reference": options["reference"], "user": actor.get_username()}) from None
            if matter.erased_at is not None:
                raise CommandError(gettext("matter '%(reference)s' was erased on %(date)s") % {
                    "reference": options["reference"], "date": f"{matter.erased_at:%Y-%m-%d}"})
            if options["format"] == BUNDLE:
                if not options["output"]:
                    raise CommandError(gettext("a bundle is a zip file: give --output FILE.zip"))
                documents, files = write_bundle(matter, actor=actor, path=Path(options["output"]))
                self.stderr.write(gettext("wrote %(path)s (%(documents)s documents, %(files)s files)") % {
                    "path": options["output"], "documents": documents, "files": files})
                return
            name, _, text = export_matter(matter, actor=actor, fmt=options["format"])
        except (RecordLookupError, TransferError) as exc:
            raise CommandError(str(exc)) from None
        if options["output"]:
            Path(options["output"]).write_text(text, encoding="utf-8")
            self.stderr.write(gettext("wrote %(path)s (%(name)s)") % {"path": options["output"], "name": name})
        else:
            self.stdout.write(text)
