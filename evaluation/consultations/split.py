"""Write ``split.json``: every question of the consultation set in ``dev`` or ``test``.

Stratified by (category, language): within each group the questions are ordered by the SHA-256
of their id and alternate between the splits — so both splits hold every kind of question, and
no one chose which question went where. Parts written together form a batch (``BATCHES``),
split in the order they were written: a later batch never moves an earlier batch's questions
(whatever was tuned on stays dev), and each of its groups starts on the side the set holds fewer
of so far (dev when even), so dev and test stay within one question of each other. Run once per
batch, before the product is run on it; a test checks the committed file is what this writes."""
from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).parent


BATCHES: tuple[tuple[str, ...], ...] = (
    ("part_a", "part_b"),   # the set as first written (2 Dec 2026)
    ("part_c",),            # a third part by another author, added before the product saw it (3 Dec 2026)
)


def questions() -> list[dict]:
    """Every question, part by part, each with the name of the part it comes from."""
    found = []
    for part in sorted(path for path in HERE.glob("part_*") if path.is_dir()):
        for question in json.loads((part / "questions.json").read_text(encoding="utf-8"))["questions"]:
            found.append({**question, "part": part.name})
    return found


def splits(all_questions: list[dict], batches: tuple[tuple[str, ...], ...] = BATCHES) -> dict[str, str]:
    """Each question's split (dev / test), batch by batch of ``batches`` (default ``BATCHES``)."""
    batch_of = {part: number for number, parts in enumerate(batches) for part in parts}
    unknown = sorted({q["part"] for q in all_questions} - set(batch_of))
    if unknown:
        raise ValueError(f"parts not in BATCHES (add them as a new batch before running the product on them): {unknown}")
    assigned: dict[str, str] = {}
    held: dict[tuple[str, str], Counter] = defaultdict(Counter)
    for number in range(len(batches)):
        groups: dict[tuple[str, str], list[str]] = defaultdict(list)
        for question in all_questions:
            if batch_of[question["part"]] == number:
                groups[(question["category"], question["language"])].append(question["id"])
        for group, ids in groups.items():
            first = "test" if held[group]["test"] < held[group]["dev"] else "dev"
            second = "dev" if first == "test" else "test"
            for position, question_id in enumerate(sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())):
                assigned[question_id] = first if position % 2 == 0 else second
                held[group][assigned[question_id]] += 1
    return dict(sorted(assigned.items()))


def render() -> str:
    return json.dumps({"description": "dev / test split of the consultation set, stratified by category and "
                                      "language, fixed before any tuning (split.py)",
                       "splits": splits(questions())}, ensure_ascii=False, indent=1) + "\n"


if __name__ == "__main__":
    (HERE / "split.json").write_text(render(), encoding="utf-8")
    print(f"wrote {HERE / 'split.json'}")
