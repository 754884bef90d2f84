"""Write ``split.json``: every question of the consultation set in ``dev`` or ``test``.

Stratified by (category, language): within each group the questions are ordered by the SHA-256
of their id and alternate dev, test, dev, … — so both splits hold every kind of question, and
no one chose which question went where. Run once, before any tuning; a test checks the committed
file is what this writes (a question added later gets its place without moving the others'
only if it is appended to its group's order, so adding questions means writing a new split)."""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).parent


def questions() -> list[dict]:
    found = []
    for part in sorted(path for path in HERE.glob("part_*") if path.is_dir()):
        found += json.loads((part / "questions.json").read_text(encoding="utf-8"))["questions"]
    return found


def splits(all_questions: list[dict]) -> dict[str, str]:
    groups: dict[tuple[str, str], list[str]] = defaultdict(list)
    for question in all_questions:
        groups[(question["category"], question["language"])].append(question["id"])
    assigned = {}
    for ids in groups.values():
        for position, question_id in enumerate(sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())):
            assigned[question_id] = "dev" if position % 2 == 0 else "test"
    return dict(sorted(assigned.items()))


def render() -> str:
    return json.dumps({"description": "dev / test split of the consultation set, stratified by category and "
                                      "language, fixed before any tuning (split.py)",
                       "splits": splits(questions())}, ensure_ascii=False, indent=1) + "\n"


if __name__ == "__main__":
    (HERE / "split.json").write_text(render(), encoding="utf-8")
    print(f"wrote {HERE / 'split.json'}")
