"""No test patches a tuning constant of the product (docs/architecture.md, "Where a change goes").

Tuning a test must change is either a parameter of the function the test calls, with the
constant as its default, or a plain Django setting declared once in the "Tuning" section of
legalmem_site/settings.py, read by the product as ``settings.NAME`` when it runs and set by the
test with pytest-django's ``settings`` fixture (restored after the test). A patched module
constant is a second, hidden way to configure the product, and goes stale silently when the
code reads the value elsewhere (a default argument, a copy made at import).

The scan reads every file of tests/ with ``ast`` and reports, as ``path:line: what``:

- ``monkeypatch.setattr(module, "UPPER_CASE", …)`` and ``setattr(module, "UPPER_CASE", …)``,
- ``monkeypatch.setattr("package.module.UPPER_CASE", …)``,
- ``mock.patch("package.module.UPPER_CASE")`` / ``patch.object(module, "UPPER_CASE")``,
- ``module.UPPER_CASE = …`` (an assignment that is never even restored),

where the module is one of the product's packages (tests/site/product_packages.py), or cannot
be told from the test file's imports. Patching what is not the product (``subprocess``,
``socket``, ``os``, a test module's own constants) is not tuning and passes.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.site.product_packages import ROOT, product_packages

TESTS = ROOT / "tests"
UPPER_CASE = re.compile(r"^[A-Z][A-Z0-9_]*$")
PATCHERS = {"setattr", "patch", "object"}  # monkeypatch.setattr / setattr, mock.patch, patch.object
#: Patches of product constants that stay, as {(test file, "module.NAME"): why}. Empty: every
#: tuning constant a test changed is now a parameter or a setting.
ALLOWED: dict[tuple[str, str], str] = {}


def imported_modules(tree: ast.Module) -> dict[str, str]:
    """Local name → dotted module path, from the file's imports (``from a import b`` gives
    ``a.b``: a module or a name of ``a``, either way of package ``a``) and
    ``x = importlib.import_module("a.b")``."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
              and ast.unparse(node.value.func).endswith("import_module")
              and node.value.args and isinstance(node.value.args[0], ast.Constant)):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = str(node.value.args[0].value)
    return names


def _module_of(expression: ast.expr, names: dict[str, str], own_module: str) -> str | None:
    """The dotted module an expression names, or None when the file's imports do not say."""
    if isinstance(expression, ast.Name):
        return names.get(expression.id)
    if isinstance(expression, ast.Attribute):
        base = _module_of(expression.value, names, own_module)
        return f"{base}.{expression.attr}" if base else None
    if isinstance(expression, ast.Call) and ast.unparse(expression).startswith("__import__(__name__"):
        return own_module  # the test module itself
    return None


def _is_product(module: str | None, packages: frozenset[str]) -> bool:
    return module is None or module.split(".")[0] in packages


def patched_constants(path: Path, root: Path = ROOT, packages: frozenset[str] | None = None) -> list[str]:
    """``path:line: module.NAME`` for every patch of an UPPER_CASE name of a product module (or
    of a module the file's imports do not name) in the test file ``path``."""
    packages = product_packages(root) if packages is None else packages
    tree = ast.parse(path.read_text(encoding="utf-8"))
    relative = path.relative_to(root).as_posix()
    own_module = relative.removesuffix(".py").replace("/", ".")
    names = imported_modules(tree)
    found: list[tuple[int, str | None, str]] = []  # (line, module, NAME)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            patcher = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if patcher not in PATCHERS or not node.args:
                continue
            first, second = node.args[0], node.args[1] if len(node.args) > 1 else None
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                module, _, name = first.value.rpartition(".")  # "package.module.NAME"
                if module and UPPER_CASE.match(name):
                    found.append((node.lineno, module, name))
            elif isinstance(second, ast.Constant) and isinstance(second.value, str) and UPPER_CASE.match(second.value):
                found.append((node.lineno, _module_of(first, names, own_module), second.value))
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(target, ast.Attribute) and UPPER_CASE.match(target.attr):
                    module = _module_of(target.value, names, own_module)
                    if module is not None and module.split(".")[0] in packages:
                        found.append((node.lineno, module, target.attr))
    reports = []
    for line, module, name in sorted(found, key=lambda item: item[0]):
        qualified = f"{module or '<unknown module>'}.{name}"
        if _is_product(module, packages) and (relative, qualified) not in ALLOWED:
            reports.append(f"{relative}:{line}: {qualified}")
    return reports


def scan(root: Path = ROOT) -> list[str]:
    """Every patched product constant under ``root``/tests."""
    packages = product_packages(root)
    return [report for path in sorted((root / "tests").rglob("*.py"))
            for report in patched_constants(path, root, packages)]


def test_no_test_patches_a_tuning_constant():
    patched = scan()
    assert not patched, (
        "tests patch module constants of the product; make each one a parameter of the function the "
        "test calls (the constant as its default) or a setting declared once in the \"Tuning\" section "
        "of legalmem_site/settings.py, read as settings.NAME and set with the `settings` fixture "
        "(docs/architecture.md, \"Where a change goes\"):\n" + "\n".join(patched))


def test_every_allowed_patch_still_exists():
    """An exception whose patch is gone is removed from ALLOWED, so the list never grows stale."""
    for (relative, qualified), why in ALLOWED.items():
        assert why and (ROOT / relative).is_file(), relative
        assert qualified.rpartition(".")[2] in (ROOT / relative).read_text(encoding="utf-8"), qualified


def test_the_scan_finds_each_kind_of_patch_and_passes_what_is_not_the_product(tmp_path):
    """The guard itself, on a fake tree: a product package, and a test file patching it in
    every way the scan knows, beside patches that are allowed."""
    (tmp_path / "recall").mkdir()
    (tmp_path / "recall" / "__init__.py").write_text("")
    (tmp_path / "tests" / "recall").mkdir(parents=True)
    (tmp_path / "tests" / "recall" / "test_fake.py").write_text(
        "import subprocess\n"
        "from unittest import mock\n"
        "from recall import query_text\n"
        "import recall.messages as message_reads\n"
        "import importlib\n"
        "scale = importlib.import_module('recall.message_scale')\n"
        "FOLDER = 'here'\n"
        "\n"
        "def test_it(monkeypatch, settings):\n"
        "    monkeypatch.setattr(query_text, 'SEARCH_QUERY_MAX_TOKENS', 8)\n"  # line 10
        "    monkeypatch.setattr('recall.candidate_sql.EXACT_CASE_MAX_ROWS', 0)\n"
        "    with mock.patch('recall.alongside.IDLE_CHECK_SECONDS', 0.0):\n"
        "        pass\n"
        "    with mock.patch.object(message_reads, 'EXACT_MESSAGE_MAX_ROWS', 0):\n"
        "        pass\n"
        "    scale.LATEST_MAX_ROWS = 40\n"
        "    setattr(unknown_thing, 'LIMIT', 1)\n"
        # not the product's tuning: passes
        "    monkeypatch.setattr(subprocess, 'PIPE', -1)\n"
        "    monkeypatch.setattr(__import__(__name__, fromlist=['FOLDER']), 'FOLDER', 'there')\n"
        "    monkeypatch.setattr(query_text, 'query_texts', len)\n"
        "    monkeypatch.setattr('socket.SOMAXCONN', 1)\n"
        "    settings.SEARCH_QUERY_MAX_TOKENS = 8\n"
    )
    assert scan(tmp_path) == [
        "tests/recall/test_fake.py:10: recall.query_text.SEARCH_QUERY_MAX_TOKENS",
        "tests/recall/test_fake.py:11: recall.candidate_sql.EXACT_CASE_MAX_ROWS",
        "tests/recall/test_fake.py:12: recall.alongside.IDLE_CHECK_SECONDS",
        "tests/recall/test_fake.py:14: recall.messages.EXACT_MESSAGE_MAX_ROWS",
        "tests/recall/test_fake.py:16: recall.message_scale.LATEST_MAX_ROWS",
        "tests/recall/test_fake.py:17: <unknown module>.LIMIT",
    ]


def test_the_suite_as_it_was_would_fail(tmp_path):
    """The patch this guard replaced, as the suite had it: reported with the way out."""
    (tmp_path / "records" / "services").mkdir(parents=True)
    (tmp_path / "records" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_old.py").write_text(
        "from records.services import compaction\n\n"
        "def test_wait(monkeypatch):\n"
        "    monkeypatch.setattr(compaction, 'SNAPSHOT_WAIT_SECONDS', 0.6)\n"
    )
    assert scan(tmp_path) == ["tests/test_old.py:4: records.services.compaction.SNAPSHOT_WAIT_SECONDS"]
