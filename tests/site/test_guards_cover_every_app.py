"""The guards check themselves: a new app is scanned by the code guards and, where a guard keeps
a list of apps of its own, named in it — or the guard fails. Proved on a fake tree holding the
product's packages and one new app."""
from __future__ import annotations

from pathlib import Path

from tests.site.product_packages import left_out, product_packages
from tests.site.test_environment_reads import reads_outside_the_reader
from tests.site.test_import_graph import PACKAGES
from tests.site.test_lower_layer_language import DEVELOPER_APPS, OPERATOR_APPS
from tests.site.test_writes_in_services import writes_outside_services


def tree_with_a_new_app(root: Path) -> Path:
    for package in [*product_packages(), "tests", "bench"]:
        (root / package).mkdir()
        (root / package / "__init__.py").write_text("")
    (root / "billing").mkdir()
    (root / "billing" / "__init__.py").write_text("")
    (root / "billing" / "views.py").write_text(
        "import os\n\n\ndef pay(invoice):\n    invoice.save()\n    return os.environ.get('BILLING_KEY')\n")
    (root / "tests" / "test_x.py").write_text("def f(row):\n    row.save()\n")  # the suite is not scanned
    return root


def test_the_lists_of_apps_miss_a_new_app(tmp_path):
    root = tree_with_a_new_app(tmp_path)
    assert product_packages(root) == product_packages() | {"billing"}
    assert left_out(PACKAGES, root) == {"billing"}  # the import graph's LAYERS
    assert left_out(OPERATOR_APPS | DEVELOPER_APPS, root) == {"billing"}  # the commands' language
    assert left_out(PACKAGES) == set() and left_out(OPERATOR_APPS | DEVELOPER_APPS) == set()


def test_the_scans_read_a_new_app_without_being_told(tmp_path):
    root = tree_with_a_new_app(tmp_path)
    assert writes_outside_services(root) == [("billing/views.py", 5, "invoice.save")]
    assert reads_outside_the_reader(root) == [("billing/views.py", 6, "os.environ.get")]
