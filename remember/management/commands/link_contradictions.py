"""``manage.py link_contradictions [--firm SLUG]``: link the current notes that disagree and were
written before routing linked such pairs (docs/memory-model.md, "Contradictions")."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from memory.models import Firm
from remember.routing.backfill import link_contradictions


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext(
            "Link current notes of the same slot with other values 'contradicts' (audited; safe to run again)."
        )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--firm", help=gettext_lazy("only this firm (its short name)"))

    def handle(self, *args, **options) -> None:
        firm = None
        if options["firm"]:
            firm = Firm.objects.filter(slug=options["firm"]).first()
            if firm is None:
                raise CommandError(gettext("unknown firm '%(slug)s'") % {"slug": options["firm"]})
        created = link_contradictions(firm=firm)
        self.stdout.write(gettext("%(count)s contradiction(s) linked") % {"count": created})
