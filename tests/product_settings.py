"""The product's settings for the processes a test starts, plus the ones tests/overrides gives."""
from __future__ import annotations

import json
import os

from legalmem_site.settings import *  # noqa: F401,F403
from tests.overrides import OVERRIDES_VARIABLE

globals().update(json.loads(os.environ.get(OVERRIDES_VARIABLE, "{}")).get("settings", {}))
