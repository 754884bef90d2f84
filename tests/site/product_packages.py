"""The product's top-level packages, read from the disk: the one list every guard test covers.

A guard that keeps a list of apps of its own (the import graph's layers, the operator commands
whose help is checked) asserts that its list and this one agree, and a guard that scans code
(writes outside services, environment reads) scans these; so a new app can be left out of no
guard silently (tests/site/test_guards_cover_every_app.py proves it on a fake tree).
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Top-level packages that are not the product: the suite and the benchmarks.
NOT_PRODUCT = frozenset({"tests", "bench"})


def product_packages(root: Path = ROOT) -> frozenset[str]:
    """Every top-level folder of ``root`` holding an ``__init__.py``, but the suite and the benches."""
    return frozenset(path.parent.name for path in root.glob("*/__init__.py")) - NOT_PRODUCT


def left_out(listed: Iterable[str], root: Path = ROOT) -> set[str]:
    """The product packages a guard's own list does not name."""
    return set(product_packages(root)) - set(listed)


def product_modules(root: Path = ROOT) -> list[Path]:
    """Every Python file of the product, migrations aside, in a stable order."""
    return [path for package in sorted(product_packages(root)) for path in sorted((root / package).rglob("*.py"))
            if "migrations" not in path.relative_to(root).parts]
