"""Rules you can list: the named checks the write and read paths apply to what they read.

A rule is a small object — a name, one line on why it exists in a lawyer's words (Chinese and
English through the project's translations), and the function it applies — registered in a
table ("extraction", "routing", "recall"), like Django's password validators or its check
framework. The extraction checks (``remember.extraction.rules``) run from this registry in the
order registered; a refusal records the rule's name beside its reason. ``manage.py rules``
lists every table.

The registry lives here, below ``remember`` and ``recall``, so each registers its own rules and
neither imports the other; ``settings.RULE_MODULES`` names the modules that register
rules, imported by ``load_rules`` (the way ``AUTH_PASSWORD_VALIDATORS`` names validators).
"""
from __future__ import annotations

import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from django.conf import settings
from django.utils.functional import Promise


@dataclass(frozen=True)
class Rule:
    """One named rule of a table: ``check(subject)`` says what the rule does with the subject
    (each table says what its subject and its answers are)."""

    table: str
    name: str
    why: str | Promise  # one line, in the lawyer's words (a lazy translation)
    check: Callable[[Any], Any] | None = None
    stage: str = ""  # where in its table's run the rule applies, when the table has stages

    def __str__(self) -> str:
        return f"{self.table}.{self.name}"


#: The tables in the order a reader meets them: what is kept from a turn, how it joins the
#: notes, how it is found again.
TABLES = ("extraction", "routing", "recall", "answer")
_tables: dict[str, dict[str, Rule]] = {}
_lock = threading.Lock()


def register(rule: Rule) -> Rule:
    """Add ``rule`` to its table (registering a name again replaces it, in its place)."""
    with _lock:
        _tables.setdefault(rule.table, {})[rule.name] = rule
    return rule


def rules(table: str) -> list[Rule]:
    """The rules of ``table``, in the order they were first registered."""
    with _lock:
        return list(_tables.get(table, {}).values())


def rule(table: str, name: str) -> Rule | None:
    with _lock:
        return _tables.get(table, {}).get(name)


def load_rules() -> dict[str, list[Rule]]:
    """Import every module of ``settings.RULE_MODULES`` (each registers its rules on
    import) and return every table by name: ``TABLES`` first, in their order, then any other."""
    for module in getattr(settings, "RULE_MODULES", ()):
        import_module(module)
    with _lock:
        names = sorted(_tables, key=lambda table: (TABLES.index(table) if table in TABLES else len(TABLES), table))
        return {table: list(_tables[table].values()) for table in names}


_NAMED_RE = re.compile(r"\[([a-z0-9-]+)\]$")


def explained(reason: str, table: str = "extraction") -> str:
    """A recorded refusal ("item 2: missing content [content-present]") with its rule's why
    after it, in the reader's language (unchanged when no registered rule is named)."""
    match = _NAMED_RE.search(reason.strip())
    found = rule(table, match.group(1)) if match else None
    return f"{reason} — {found.why}" if found else reason
