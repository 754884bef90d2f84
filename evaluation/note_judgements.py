"""Note precision (issue 50): is each note true to its source? Judged note by note by a reader
who did not write the rules, and stored beside the split (``note_truth/<split>/judgements.json``).

A rule cannot judge the rules' own output honestly, so the verdicts are a reader's: the
judgements file maps a note's key (its origin, status, category and text) to a verdict and the problems
found. ``evaluate_notes`` reports the precision over the notes judged and counts the notes not
judged yet (a changed write path writes new texts); ``--unjudged FILE`` writes those notes with
their sources for the next reading. The judge's brief is in ``note_truth/JUDGING.md``.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).resolve().parent / "note_truth"
#: What can make a note untrue, as the judge names it (JUDGING.md explains each).
PROBLEMS = ("content", "cut", "speaker", "kind", "state", "not_a_fact")


def note_key(origin: str, status: str, category: str, content: str) -> str:
    """A note's identity for the judge: where it came from, whether it is current, what kind it is
    filed as and what it says (a note re-filed or reworded is judged again)."""
    return hashlib.sha1(f"{origin}\x1f{status}\x1f{category}\x1f{content}".encode()).hexdigest()[:16]


@dataclass
class PrecisionReport:
    notes: int = 0
    judged: int = 0
    judged_true: int = 0
    problems: Counter = field(default_factory=Counter)
    false_notes: list[str] = field(default_factory=list)
    unjudged: list[dict[str, Any]] = field(default_factory=list)

    def lines(self) -> list[str]:
        share = f"{self.judged_true / self.judged:.3f} ({self.judged_true}/{self.judged})" if self.judged else "-"
        problems = ", ".join(f"{name} {count}" for name, count in self.problems.most_common()) or "none"
        return [f"  note precision (judged true / judged): {share}; not yet judged: {len(self.unjudged)} of "
                f"{self.notes}; problems: {problems}"]


def load_judgements(split: str, folder: Path = FOLDER) -> dict[str, dict[str, Any]]:
    """The split's verdicts by note key, from ``folder`` ({} when nothing was judged yet)."""
    path = folder / split / "judgements.json"
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))["notes"]


def judge_notes(split: str, notes: list[dict[str, Any]], folder: Path = FOLDER) -> PrecisionReport:
    """Score ``notes`` (origin, status, content, category, speaker, subject, sources) against the
    verdicts stored in ``folder``; the notes without one are kept, with their sources, in ``unjudged``."""
    verdicts = load_judgements(split, folder)
    report = PrecisionReport(notes=len(notes))
    for note in notes:
        key = note_key(note["origin"], note["status"], note["category"], note["content"])
        verdict = verdicts.get(key)
        if verdict is None:
            report.unjudged.append({"key": key, **note})
            continue
        report.judged += 1
        if verdict["verdict"] == "true":
            report.judged_true += 1
        else:
            report.problems.update(verdict.get("problems") or ["unnamed"])
            report.false_notes.append(f"false note ({', '.join(verdict.get('problems') or [])}) "
                                      f"{note['origin']} {note['status']}: {note['content'][:80]} — {verdict.get('reason', '')}")
    return report


def write_unjudged(path: Path, split: str, report: PrecisionReport) -> None:
    """The notes still to judge, as the judge reads them (see JUDGING.md)."""
    path.write_text(json.dumps({"split": split, "notes": report.unjudged}, ensure_ascii=False, indent=1),
                    encoding="utf-8")
