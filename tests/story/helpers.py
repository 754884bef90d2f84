"""Reading a run folder back (every file must be valid JSON) and the command's output."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

RUN_FOLDER_RE = re.compile(r"run folder: (?P<path>\S+)")
FILES = (
    "00_api_research.md", "01_story_generation_request.json", "02_story_generation_response.json",
    "03_story_exchanges.json", "90_stored_notes.json", "91_graph_summary.json",
)


def run_folder(output: str) -> Path:
    match = RUN_FOLDER_RE.search(output)
    assert match, output
    return Path(match["path"])


def load(folder: Path) -> dict[str, Any]:
    """All files of a run folder, parsed; turns by label."""
    for name in FILES:
        assert (folder / name).is_file(), name
    data = {name: json.loads((folder / name).read_text(encoding="utf-8")) for name in FILES if name.endswith(".json")}
    data["research"] = (folder / "00_api_research.md").read_text(encoding="utf-8")
    data["turns"] = {
        path.stem: json.loads(path.read_text(encoding="utf-8")) for path in sorted((folder / "turns").glob("*.json"))
    }
    return data
