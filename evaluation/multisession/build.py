"""Write the multi-session evaluation set's JSON files from the hand-written sessions.

    python -m evaluation.multisession.build

Reads ``emma.py``, ``wang.py``, ``lin.py`` and ``others.py`` and writes, next to this file:
``world.json`` (firms, users, matters, assignments), one import_conversation transcript per
firm (``transcript-<firm>.json``) and ``questions.json`` (gold evidence as message ids).
Deterministic: the same sources give byte-identical files.
"""
from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from evaluation.multisession import emma, lin, others, wang
from evaluation.multisession.sessions import Question, Session

HERE = Path(__file__).parent
TZ = "+08:00"
TURN_SPACING = timedelta(minutes=4)
REPLY_DELAY = timedelta(seconds=50)

WORLD = {
    "firms": [
        {"slug": "hartwell", "name": "Hartwell & Zhou", "users": ["emma", "wang", "lin", "zhou"], "matters": [
            {"reference": "H-101", "title": "Morales v Greenway Properties (deposit)", "assigned": ["emma"]},
            {"reference": "H-102", "title": "Patel v Northline Logistics (dismissal)", "assigned": ["emma"]},
            {"reference": "H-103", "title": "Kim cycling collision", "assigned": ["emma"]},
            {"reference": "H-201", "title": "赵敏加班费劳动争议", "assigned": ["wang"]},
            {"reference": "H-202", "title": "刘建国离婚财产分割", "assigned": ["wang"]},
            {"reference": "H-203", "title": "孙丽健身房退费", "assigned": ["wang"]},
            {"reference": "H-301", "title": "Blue Harbor v Codewell software contract", "assigned": ["lin"]},
            {"reference": "H-302", "title": "陈志强交通事故", "assigned": ["lin"]},
            {"reference": "H-303", "title": "Maple Café lease termination", "assigned": ["lin"]},
            {"reference": "H-298", "title": "Greenway Properties deposit review (walled)", "assigned": ["zhou"]},
            {"reference": "H-299", "title": "Orion 并购项目 (walled)", "assigned": ["zhou"]},
        ]},
        {"slug": "northgate", "name": "Northgate Legal", "users": ["dave"], "matters": [
            {"reference": "N-01", "title": "陈露押金纠纷", "assigned": ["dave"]},
            {"reference": "N-02", "title": "Ruiz scooter collision", "assigned": ["dave"]},
            {"reference": "N-03", "title": "高远加班费", "assigned": ["dave"]},
        ]},
    ]
}

SESSIONS: list[Session] = [*emma.SESSIONS, *wang.SESSIONS, *lin.SESSIONS, *others.SESSIONS]
QUESTIONS: list[Question] = [*emma.QUESTIONS, *wang.QUESTIONS, *lin.QUESTIONS, *others.QUESTIONS]


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + TZ


def transcripts() -> tuple[dict[str, dict], dict[str, str]]:
    """One import_conversation payload per firm, and turn key → user message id."""
    by_firm: dict[str, dict] = {}
    evidence: dict[str, str] = {}
    for session in SESSIONS:
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


def questions(evidence: dict[str, str]) -> list[dict]:
    rows = []
    for number, question in enumerate(QUESTIONS, start=1):
        missing = [key for key in question.gold if key not in evidence]
        if missing:
            raise ValueError(f"question {question.text!r} cites unknown turns {missing}")
        row = {"id": f"q{number:03d}", "category": question.category, "language": question.language,
               "user": question.user, "question": question.text,
               "gold": [evidence[key] for key in question.gold]}
        if question.matter:
            row["matter"] = question.matter
        rows.append(row)
    return rows


def write(directory: Path = HERE) -> list[Path]:
    by_firm, evidence = transcripts()
    files = {"world.json": WORLD, "questions.json": {
        "description": "LegalMem multi-session evaluation: questions with gold evidence message ids "
                       "(the user messages that answer them). must_not_recall questions cite evidence "
                       "the asker may not see; returning it is a leak.",
        "questions": questions(evidence)}}
    for slug, payload in by_firm.items():
        files[f"transcript-{slug}.json"] = payload
    written = []
    for name, payload in files.items():
        path = directory / name
        path.write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write():
        print(path)
