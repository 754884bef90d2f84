"""Screenshots the browser tests save for review: ``DATA_DIR/screenshots/<name>.png``
(under the test data folder, e.g. var/test-data/screenshots/chat.png)."""
from __future__ import annotations

from pathlib import Path

from django.conf import settings


def save_screenshot(page, name: str) -> Path:
    """Save the whole page as ``<name>.png`` and return its path."""
    folder = Path(settings.DATA_DIR) / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path
