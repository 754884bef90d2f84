"""The configuration a firm reads: every environment variable the product reads is declared once
(legalmem_site/environment.py), there are at most 46 of them, docs/configuration.md shows exactly
that declaration, and settings.py writes its middleware as one list in order."""
from __future__ import annotations

import re
from pathlib import Path

from django.conf import settings

from legalmem_site.environment import DECLARED, GROUPS, TABLE_END, TABLE_START, VARIABLES, configuration_tables

BASE_DIR = Path(__file__).resolve().parents[2]
# Code that is not the product: its own variables (BENCH_*, the tests' LEGALMEM_TEST_OVERRIDES) stay there.
NOT_PRODUCT = {".venv", "tests", "bench", "var", "node_modules", ".git"}
ENV_READ = re.compile(
    r"""(?:os\.environ\.get|os\.getenv|environ\.get|env_(?:str|bool|int|float|list|choice|url|header)|\bread)\(\s*["']([A-Z][A-Z0-9_]*)["']"""
    r"""|os\.environ\[\s*["']([A-Z][A-Z0-9_]*)["']\s*\]"""
    r"""|["']([A-Z][A-Z0-9_]*)["']\s+(?:not\s+)?in\s+os\.environ"""
)


def product_files():
    for path in sorted(BASE_DIR.rglob("*.py")):
        if not NOT_PRODUCT & set(path.relative_to(BASE_DIR).parts):
            yield path


def env_reads() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in product_files():
        for match in ENV_READ.finditer(path.read_text(encoding="utf-8")):
            name = next(group for group in match.groups() if group)
            found.setdefault(name, set()).add(str(path.relative_to(BASE_DIR)))
    return found


def test_every_environment_read_of_the_product_is_declared():
    undeclared = {name: files for name, files in env_reads().items()
                  if name not in DECLARED and name != "DJANGO_SETTINGS_MODULE"}
    assert not undeclared, f"declare these in legalmem_site/environment.py (VARIABLES): {undeclared}"


def test_every_declared_variable_is_read():
    assert not set(DECLARED) - set(env_reads())


def test_at_most_45_variables_each_in_a_known_group_and_documented():
    assert len(VARIABLES) == len(DECLARED) <= 46
    for variable in VARIABLES:
        assert variable.group in GROUPS, variable.name
        assert variable.doc and variable.shown, variable.name


def test_docs_configuration_is_the_declaration():
    text = (BASE_DIR / "docs" / "configuration.md").read_text(encoding="utf-8")
    start, end = text.index(TABLE_START), text.index(TABLE_END) + len(TABLE_END)
    assert text[start:end] == configuration_tables(), "run `python -m legalmem_site.environment` and commit the doc"
    table_names = re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", text[start:end], flags=re.M)
    assert [n for n in table_names if n in DECLARED] == [v.name for v in VARIABLES]


def test_settings_write_the_middleware_once_in_order():
    source = (BASE_DIR / "legalmem_site" / "settings.py").read_text(encoding="utf-8")
    assert source.count("MIDDLEWARE =") == 1
    assert not re.search(r"MIDDLEWARE\s*(\.(insert|append|extend|remove)\(|\+=)", source)
    assert not re.search(r"INSTALLED_APPS\s*(\.(insert|append|extend|remove)\(|\+=)", source)
    assert settings.MIDDLEWARE[0] == "infra.logs.requests.RequestLogMiddleware"
    assert settings.MIDDLEWARE[-1] == "axes.middleware.AxesMiddleware"
    assert len(settings.MIDDLEWARE) == len(set(settings.MIDDLEWARE))


def test_settings_are_grouped_by_concern_not_by_branch():
    source = (BASE_DIR / "legalmem_site" / "settings.py").read_text(encoding="utf-8")
    assert not re.search(r"# --- (end )?[A-Z][A-Z-]+ ---", source), "a block named after a branch"


def test_every_setting_product_code_reads_exists():
    """A retired variable's old setting read somewhere (``settings.LLM_MAX_REQUEST_SECONDS``) would fail only when
    that line runs; here it fails at once, naming the file."""
    missing = {}
    for path in product_files():
        for name in re.findall(r"\bsettings\.([A-Z][A-Z0-9_]+)\b", path.read_text(encoding="utf-8")):
            if not hasattr(settings, name):
                missing.setdefault(name, set()).add(str(path.relative_to(BASE_DIR)))
    assert not missing, f"read from django.conf.settings but not defined: {missing}"
