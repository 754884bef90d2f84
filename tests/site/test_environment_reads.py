"""Every environment variable the product reads is read through legalmem_site/environment.py
(its declaration, its kind, its one-line error), never with ``os.environ`` of its own.

Read with ``ast`` from every product module (``tests/site/product_packages.py``): a call of
``os.environ.get(…)`` or ``os.getenv(…)`` and a subscript ``os.environ[…]`` that is read outside
``environment.py`` fail the test, naming file, line and what was read — unless ``ALLOWED``
lists it with its reason. Copying the whole environment for a child process (``{**os.environ}``)
and setting a variable are not reads.
"""
from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

from tests.site.product_packages import ROOT, product_modules

#: Where the product's variables are declared and read.
READER = "legalmem_site/environment.py"

# (file, the expression as written) → why it reads the environment itself. An entry that no
# longer matches anything fails the test too.
ALLOWED: dict[tuple[str, str], str] = {
    ("connectors/management/commands/mcp_config.py", "os.environ.get"):
        "copies the embeddings and search variables as the operator wrote them into an MCP client's "
        "configuration, for `manage.py mcp` to read through environment.py when it starts",
    ("connectors/management/commands/mcp_config.py", "os.environ[key]"): "the same copy",
}


def environment_reads(source: str) -> list[tuple[int, str]]:
    """(line, expression) of every read of one environment variable in ``source``."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            call = ast.get_source_segment(source, node.func)
            if call in {"os.environ.get", "os.getenv", "environ.get"}:
                found.append((node.lineno, call))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            if ast.get_source_segment(source, node.value) in {"os.environ", "environ"}:
                found.append((node.lineno, ast.get_source_segment(source, node)))
    return found


def reads_outside_the_reader(root: Path = ROOT) -> list[tuple[str, int, str]]:
    found = []
    for path in product_modules(root):
        relative = path.relative_to(root).as_posix()
        if relative == READER:
            continue
        for line, expression in environment_reads(path.read_text(encoding="utf-8")):
            found.append((relative, line, expression))
    return found


def test_the_scan_finds_reads_and_skips_copies_and_writes():
    source = (
        "import os\n"
        "a = os.environ.get('DATABASE_URL', '')\n"
        "b = os.environ['SECRET_KEY']\n"
        "c = os.getenv('PORT')\n"
        "env = {**os.environ, 'X': '1'}\n"
        "os.environ['Y'] = '2'\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'legalmem_site.settings')\n"
    )
    assert environment_reads(source) == [(2, "os.environ.get"), (3, "os.environ['SECRET_KEY']"), (4, "os.getenv")]


def test_every_environment_read_goes_through_environment_py():
    unexplained = [f"{file}:{line}: {expression}" for file, line, expression in reads_outside_the_reader()
                   if (file, expression) not in ALLOWED]
    assert unexplained == [], (
        "environment variables read outside legalmem_site/environment.py (declare the variable there and "
        "read it with environment.read / environment.optional, or from django.conf.settings in an app):\n"
        + "\n".join(unexplained)
    )


def test_every_allowed_read_still_exists():
    seen = Counter((file, expression) for file, _, expression in reads_outside_the_reader())
    assert sorted(key for key in ALLOWED if not seen[key]) == []
