"""``manage.py clean_echo_notes [--firm SLUG] [--apply]``: find (and with ``--apply`` delete, each
deletion audited) the notes made from the assistant's own echoes — an answer the offline engine
composed from memory, or a reply's sentence that only quoted what was recalled for it. The write
path no longer makes them (docs/write-path.md, "Only new knowledge"); this cleans what it made
before. Without ``--apply`` it only lists them."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from memory.models import Firm
from remember.echoes import echo_notes
from memory.services.notes import delete_note

ACTOR = "system:clean_echo_notes"


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext(
            "List (or with --apply delete, audited) notes made from the assistant's echoes of recalled memory."
        )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--firm", help=gettext_lazy("only this firm's notes (its slug)"))
        parser.add_argument("--apply", action="store_true",
                            help=gettext_lazy("delete them (each deletion is in the audit log)"))

    def handle(self, *args, **options) -> None:
        firm = None
        if options["firm"]:
            firm = Firm.objects.filter(slug=options["firm"]).first()
            if firm is None:
                raise CommandError(gettext("no firm with the slug '%(slug)s'") % {"slug": options["firm"]})
        notes = echo_notes(firm)
        for note in notes:
            self.stdout.write(f"{note.pk}  {note.content[:70]}")
        if not options["apply"]:
            self.stdout.write(gettext("%(count)s echo note(s); run again with --apply to delete them (audited)")
                              % {"count": len(notes)})
            return
        for note in notes:
            delete_note(note, actor=ACTOR, reason="made from the assistant's echo of recalled memory")
        self.stdout.write(self.style.SUCCESS(
            gettext("deleted %(count)s echo note(s), each recorded in the audit log") % {"count": len(notes)}))
