"""Build ``conversations.json`` and ``questions.json`` from the hand-written ``source.json``.

``source.json`` holds, per user, the memories (``date`` "MM-DD", ``time`` "HH:MM", ``title``,
the user's ``message``, the assistant's ``reply``) and the questions (``difficulty`` "easy" when
the final line alone points to the memory, "hard" when only the whole dialogue does; ``gold``:
the memory's number, from 1; ``context`` lines; ``question``: the final user line; ``note``).
This script assigns the ids (``u<N>-m<MM>``, messages ``-u1`` / ``-r1``; questions
``u<N>-q<QQ>``), dates every memory in 2026 (Beijing time, the reply 35–85 s after the user's
message) and checks each user's memories come in time order. The difficulty is not written: the
import format has no field for it (README.md lists the easy ones).

    python3 build.py              # write beside this file
    python3 build.py --out DIR    # write into DIR (to compare with the committed files)
"""
from __future__ import annotations

import argparse
import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
TZ = "+08:00"


def build(source: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]], list[str]]:
    """The conversations payload, the questions and the ids of the easy questions."""
    conversations, questions, easy = [], [], []
    for entry in source["users"]:
        uid = entry["user"]
        n = uid.split("_")[1]
        previous = None
        for i, memory in enumerate(entry["memories"], 1):
            cid = f"u{n}-m{i:02d}"
            asked = datetime.fromisoformat(f"2026-{memory['date']}T{memory['time']}:00")
            if previous is not None and asked <= previous:
                raise ValueError(f"{cid}: timestamps must increase")
            previous = asked
            replied = asked + timedelta(seconds=35 + (i * 7) % 50)
            conversations.append({
                "id": cid, "user": uid, "title": memory["title"],
                "messages": [
                    {"id": f"{cid}-u1", "role": "user", "speaker": uid,
                     "timestamp": asked.isoformat() + TZ, "content": memory["message"]},
                    {"id": f"{cid}-r1", "role": "assistant", "speaker": "assistant",
                     "timestamp": replied.isoformat() + TZ, "content": memory["reply"]},
                ]})
        for j, question in enumerate(entry["questions"], 1):
            qid = f"u{n}-q{j:02d}"
            if question["difficulty"] == "easy":
                easy.append(qid)
            questions.append({
                "id": qid, "user": uid, "context": question["context"], "question": question["question"],
                "category": "dialogue",
                "gold_message_ids": [f"u{n}-m{question['gold']:02d}-u1"], "note": question["note"]})
    return {"firm": "dialogue-dev", "conversations": conversations}, questions, easy


def main() -> None:
    """Read source.json, write the two files of the set (the import format) and say what was built."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=HERE, help="write here (default: beside this file)")
    out = parser.parse_args().out
    source = json.loads((HERE / "source.json").read_text(encoding="utf-8"))
    conversations, questions, easy = build(source)
    out.mkdir(parents=True, exist_ok=True)
    for name, payload in (("conversations.json", conversations), ("questions.json", questions)):
        (out / name).write_text(json.dumps(payload, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print("conversations:", len(conversations["conversations"]), "questions:", len(questions))
    print("easy (final line alone suffices):", len(easy), " ".join(easy))


if __name__ == "__main__":
    main()
