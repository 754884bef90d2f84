"""``manage.py rules``: every registered rule, table by table, with its name and why
(memory.rules; the tables are filled by the modules of ``settings.RULE_MODULES``)."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from memory.rules import load_rules


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("List the named rules the write and read paths apply, with why each exists.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--table", help=gettext_lazy("only this table (extraction, routing or recall)"))

    def handle(self, *args, table: str | None = None, **options) -> None:
        tables = load_rules()
        if table is not None and table not in tables:
            raise CommandError(gettext("no rule table '%(table)s'; the tables: %(tables)s")
                               % {"table": table, "tables": ", ".join(tables)})
        for name, found in tables.items():
            if table is not None and name != table:
                continue
            self.stdout.write(f"{name} ({len(found)})")
            for rule in found:
                stage = f" [{rule.stage}]" if rule.stage else ""
                self.stdout.write(f"  {rule.name}{stage}: {rule.why}")
