"""The product's settings for the processes a test starts, plus tests/overrides (see there)."""
from __future__ import annotations

import json
import os

from legalmem_site.settings import *  # noqa: F401,F403
from legalmem_site.settings import INSTALLED_APPS
from tests.overrides import OVERRIDES_VARIABLE

globals().update(json.loads(os.environ.get(OVERRIDES_VARIABLE, "{}")).get("settings", {}))
INSTALLED_APPS = [*INSTALLED_APPS, "tests.overrides"]
