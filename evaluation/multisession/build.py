"""Build the multi-session evaluation set: the hand-written data in ``source/*.json`` becomes
``world.json``, one import_conversation transcript per firm (``transcript-<firm>.json``) and
``questions.json`` (gold evidence as message ids) next to this file. Deterministic: the same
sources give byte-identical files.

    python -m evaluation.multisession.build                # write in place
    python -m evaluation.multisession.build --check        # compare, write nothing
    python -m evaluation.multisession.build --out /tmp/x   # write into /tmp/x

``source/set.json``: ``description`` (questions.json's), ``people`` (the other source files, in
the order their sessions and questions are numbered: ``emma``, ``wang``, ``lin``, ``others``)
and ``firms`` (as world.json). Each ``source/<name>.json``: ``description`` (who this is),
``sessions`` (``id``, ``user``, ``firm``, ``started`` "YYYY-MM-DD HH:MM" local time +08:00,
``language`` "en" | "zh" | "mixed", ``title``, ``matter``?, ``turns``: ``key``? (the name
questions cite; absent when none does), ``user`` message, assistant ``reply``) and
``questions`` (``category``, ``language``, ``user``, ``question``, ``gold``: turn keys,
``matter``? the reference it is asked inside, ``note``? for readers only).
Message ids: ``<session>-<NN>``, turn t holding messages 2t-1 (user) and 2t; questions ``qNNN``.
"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
SOURCE = HERE / "source"
TZ = "+08:00"
TURN_SPACING = timedelta(minutes=4)
REPLY_DELAY = timedelta(seconds=50)


@dataclass(frozen=True)
class Turn:
    key: str  # "" for a turn no question cites
    user: str
    reply: str


@dataclass
class Session:
    id: str
    user: str
    firm: str
    started: str  # "YYYY-MM-DD HH:MM", local time (+08:00)
    language: str  # "en" | "zh" | "mixed"
    title: str
    turns: list[Turn]
    matter: str | None = None


@dataclass
class Question:
    category: str
    language: str
    user: str
    text: str
    gold: list[str]  # turn keys ("e.deposit_v1"); their user messages are the evidence
    matter: str | None = None  # asked inside this matter (its reference), else with no context
    note: str = ""  # what the gold says, for people reading the file


@dataclass
class Sources:
    """Everything ``source/`` holds, read and checked for shape."""
    description: str
    firms: list[dict[str, Any]]
    sessions: list[Session]
    questions: list[Question]


def _read(path: Path) -> dict[str, Any]:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: the multi-session set's source data is missing")
    return json.loads(path.read_text(encoding="utf-8"))


def _fields(row: dict[str, Any], required: set[str], optional: set[str], where: str) -> None:
    """Refuse a row with a missing or unknown field (a typo must not pass silently)."""
    missing, unknown = required - set(row), set(row) - required - optional
    if missing or unknown:
        raise ValueError(f"{where}: missing {sorted(missing)}, unknown {sorted(unknown)}")


def _session(row: dict[str, Any], where: str) -> Session:
    _fields(row, {"id", "user", "firm", "started", "language", "title", "turns"}, {"matter"}, where)
    turns = []
    for number, turn in enumerate(row["turns"], start=1):
        _fields(turn, {"user", "reply"}, {"key"}, f"{where} turn {number}")
        turns.append(Turn(turn.get("key", ""), turn["user"], turn["reply"]))
    return Session(row["id"], row["user"], row["firm"], row["started"], row["language"], row["title"],
                   turns, matter=row.get("matter"))


def _question(row: dict[str, Any], where: str) -> Question:
    _fields(row, {"category", "language", "user", "question", "gold"}, {"matter", "note"}, where)
    return Question(row["category"], row["language"], row["user"], row["question"], list(row["gold"]),
                    matter=row.get("matter"), note=row.get("note", ""))


def load_sources(directory: Path = SOURCE) -> Sources:
    """``set.json`` and every file it names; FileNotFoundError when one is missing, ValueError
    for a JSON file it does not name or a row of the wrong shape."""
    index = _read(directory / "set.json")
    _fields(index, {"description", "people", "firms"}, set(), "set.json")
    unnamed = sorted({path.stem for path in directory.glob("*.json")} - {"set", *index["people"]})
    if unnamed:
        raise ValueError(f"{directory}: {', '.join(unnamed)} not named in set.json's people")
    sessions: list[Session] = []
    questions: list[Question] = []
    for name in index["people"]:
        data = _read(directory / f"{name}.json")
        _fields(data, {"description", "sessions", "questions"}, set(), f"{name}.json")
        sessions += [_session(row, f"{name}.json session {n}") for n, row in enumerate(data["sessions"], 1)]
        questions += [_question(row, f"{name}.json question {n}") for n, row in enumerate(data["questions"], 1)]
    return Sources(index["description"], index["firms"], sessions, questions)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + TZ


def transcripts(sessions: list[Session]) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """One import_conversation payload per firm, and turn key → user message id."""
    by_firm: dict[str, dict[str, Any]] = {}
    evidence: dict[str, str] = {}
    for session in sessions:
        start = datetime.strptime(session.started, "%Y-%m-%d %H:%M")
        messages = []
        for index, turn in enumerate(session.turns):
            asked = start + index * TURN_SPACING
            question_id = f"{session.id}-{2 * index + 1:02d}"
            if turn.key:
                if turn.key in evidence:
                    raise ValueError(f"turn key {turn.key!r} used twice")
                evidence[turn.key] = question_id
            messages.append({"id": question_id, "role": "user", "speaker": session.user,
                             "timestamp": _stamp(asked), "content": turn.user})
            messages.append({"id": f"{session.id}-{2 * index + 2:02d}", "role": "assistant",
                             "speaker": "assistant", "timestamp": _stamp(asked + REPLY_DELAY),
                             "content": turn.reply})
        conversation = {"id": session.id, "user": session.user, "title": session.title,
                        "messages": messages}
        if session.matter:
            conversation["matter"] = session.matter
        by_firm.setdefault(session.firm, {"firm": session.firm, "conversations": []})["conversations"].append(
            conversation)
    return by_firm, evidence


def questions(rows: list[Question], evidence: dict[str, str]) -> list[dict[str, Any]]:
    """The questions numbered ``q001``…, their gold turn keys as message ids."""
    built = []
    for number, question in enumerate(rows, start=1):
        missing = [key for key in question.gold if key not in evidence]
        if missing:
            raise ValueError(f"question {question.text!r} cites unknown turns {missing}")
        row = {"id": f"q{number:03d}", "category": question.category, "language": question.language,
               "user": question.user, "question": question.text,
               "gold": [evidence[key] for key in question.gold]}
        if question.matter:
            row["matter"] = question.matter
        built.append(row)
    return built


def build(source: Path = SOURCE) -> dict[str, str]:
    """File name → text of every generated file: world.json, questions.json, transcript-<firm>.json."""
    sources = load_sources(source)
    by_firm, evidence = transcripts(sources.sessions)
    files: dict[str, Any] = {"world.json": {"firms": sources.firms}, "questions.json": {
        "description": sources.description, "questions": questions(sources.questions, evidence)}}
    for slug, payload in by_firm.items():
        files[f"transcript-{slug}.json"] = payload
    return {name: json.dumps(payload, ensure_ascii=False, indent=1) + "\n" for name, payload in files.items()}


def write(directory: Path = HERE) -> list[Path]:
    """Write the generated files into ``directory``; their paths."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in build().items():
        path = directory / name
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    """Write the set (in place or into --out), or with --check compare it to the committed files."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=HERE, help="write here (default: beside this file)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 unless the committed files match")
    options = parser.parse_args(argv)
    if not options.check:
        for path in write(options.out):
            print(f"wrote {path}")
        return 0
    texts = build()
    differ = False
    for name, text in texts.items():
        path = options.out / name
        same = path.is_file() and path.read_text(encoding="utf-8") == text
        differ |= not same
        print(f"{'same' if same else 'DIFFERS'}: {path}")
    for path in sorted(options.out.glob("*.json")):
        if path.name not in texts:
            differ = True
            print(f"NOT BUILT: {path}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
