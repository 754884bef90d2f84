"""Every database write of the product is made by a service (docs/architecture.md, Layers).

A service is a module under a ``services`` package or named ``services.py`` (``memory/services/``,
``records/services/``, ``navigation/services.py``, ``logins/services.py``): it writes one
family of models inside ``transaction.atomic`` and, where the change matters, leaves the audit
entry (``memory.services.audit.record``). Everything else reads, and calls a service to write.

Read with ``ast`` from every module of every product package (``tests/site/product_packages.py``;
migrations aside; ``tests/`` and ``bench/`` are
not product code and build their fixtures as they like): a call of ``.save(…)``,
``.create(…)``, ``.get_or_create(…)``, ``.update_or_create(…)``, ``.bulk_create(…)``,
``.bulk_update(…)``, ``.update(<keywords only>)`` (a queryset's; ``dict.update(other)`` takes a
positional argument) or ``.delete()`` (a queryset's or a row's; ``cache.delete(key)`` takes
one) outside a service fails the test, naming file, line and call — unless ``ALLOWED`` below
lists it, with its reason.
"""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from tests.site.product_packages import ROOT, product_modules
WRITES = {"save", "create", "get_or_create", "update_or_create", "bulk_create", "bulk_update"}

# (file, the call as written) → why it may stay outside a service. Keep it short and honest;
# an entry that no longer matches anything fails the test too (the list stays true).
ALLOWED: dict[tuple[str, str], str] = {
    # Not the ORM: an SDK or a store protocol whose method happens to be called create/save.
    ("infra/llm/client.py", "client.chat.completions.create"): "the OpenAI SDK's request, not a row",
    ("infra/embeddings/backends.py", "self._client.embeddings.create"): "the OpenAI SDK's request, not a row",
    ("infra/llm/json_requests.py", "self.modes.save"): "a ModeStore; the shared one writes through "
                                                       "memory.services.llm_servers (memory.llm_stores)",
    ("showcase/story/generation.py", "entry.update"): "a dict of the story's generation report",
    # Django's own machinery.
    ("memory/models/audit.py", "super().save"): "the append-only AuditLog's guard calling Model.save",
    ("records/admin.py", "formset.save"): "Django admin's formset with commit=False: builds the rows "
                                          "that assign_user / unassign_user then write",
    # A management command's development fixture: the demo accounts (Django auth users; no user
    # service exists — firms, memberships, matters and assignments go through services.tenancy).
    ("memory/management/commands/seed_demo.py", "User.objects.get_or_create"): "demo accounts of `seed_demo`",
    ("memory/management/commands/seed_demo.py", "user.save"): "demo accounts of `seed_demo` (their password)",
}


def is_service(relative: Path) -> bool:
    return "services" in relative.parts[:-1] or relative.name == "services.py"


def write_calls(source: str) -> list[tuple[int, str]]:
    """(line, call) of every ORM-write-shaped call in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name = node.func.attr
        if (name in WRITES
                or (name == "update" and node.keywords and not node.args)
                or (name == "delete" and not node.args and not node.keywords)):
            call = " ".join(ast.get_source_segment(source, node.func).split())
            found.append((node.lineno, call))
    return found


def writes_outside_services(root: Path = ROOT) -> list[tuple[str, int, str]]:
    """Every write-shaped call outside a service, in every product package (a new app included)."""
    found = []
    for path in product_modules(root):
        relative = path.relative_to(root)
        if is_service(relative):
            continue
        for line, call in write_calls(path.read_text(encoding="utf-8")):
            found.append((relative.as_posix(), line, call))
    return found


def test_the_scan_finds_writes_and_skips_what_is_not_one():
    source = (
        "def f(note, qs, d, cache):\n"
        "    note.save(update_fields=['x'])\n"
        "    Note.objects.create(a=1)\n"
        "    qs.filter(a=1).update(b=2)\n"
        "    qs.delete()\n"
        "    d.update(other)\n"
        "    cache.delete('key')\n"
        "    Note.objects.bulk_create(rows)\n"
    )
    assert write_calls(source) == [
        (2, "note.save"), (3, "Note.objects.create"), (4, "qs.filter(a=1).update"), (5, "qs.delete"),
        (8, "Note.objects.bulk_create"),
    ]


def test_the_scan_reads_the_product():
    found = writes_outside_services()
    assert {call for _, _, call in found} >= {"super().save", "formset.save"}  # it sees the allowed ones
    assert is_service(Path("memory/services/notes.py")) and is_service(Path("navigation/services.py"))
    assert not is_service(Path("remember/turns.py"))


def test_every_write_is_in_a_service():
    unexplained = [f"{file}:{line}: {call}" for file, line, call in writes_outside_services()
                   if (file, call) not in ALLOWED]
    assert unexplained == [], (
        "writes outside a service (move them into a services module, or list them in ALLOWED with "
        "the reason):\n" + "\n".join(unexplained)
    )


def test_every_allowed_write_still_exists():
    seen = Counter((file, call) for file, _, call in writes_outside_services())
    stale = sorted(key for key in ALLOWED if not seen[key])
    assert stale == [], f"ALLOWED names writes that are gone: {stale}"
