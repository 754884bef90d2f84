"""Can the configured LLM tell a question memory holds nothing on from one it answers? (not in CI)

Issue 29 asks recall to return nothing for at least 0.9 of the questions about something never
said or said only behind an ethical wall; the offline signals cannot tell those apart from
paraphrased answerable questions (docs/evaluation.md, "Returning nothing"). This measures the
other candidate, a reader: the chat's LLM shown the question and the product's first
``BENCH_READ_TOP`` hits in full, asked whether they hold its answer (JSON ``{"found": …}``).

The consultation set's **dev split** (``evaluation/consultations``) is imported with the
offline engine into throw-away firms inside a transaction that is rolled back; every
``must_not_recall`` / ``never_said`` question and ``BENCH_ANSWERABLE`` answerable ones (every
n-th, default 24) are asked through ``search_memory`` as their user, with their dialogue. Reported:

- unanswerable questions the reader would blank (``found`` false) — the share issue 29 wants ≥ 0.9;
- answerable questions it would blank, and among them those whose gold the product had in its
  top 10 (the recall a reader would cost);
- seconds per question.

Run (the llama.cpp server of docs/story-and-real-llm.md on port 8088):

    LLM_BASE_URL=http://127.0.0.1:8088/v1 LLM_MODEL=qwen-local LLM_TIMEOUT_SECONDS=300 \\
    LEGALMEM_DATA_DIR=/tmp/llm-data \\
    /work/main/.venv/bin/python -m legalmem_site.launcher manage shell -c \\
      "from bench.bench_answerability_llm import main; main()"

Figures go to stdout and to ``$LEGALMEM_DATA_DIR/bench_answerability_llm.json``.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

CONSULTATIONS = Path(__file__).resolve().parent.parent / "evaluation" / "consultations"

FOUND_SCHEMA = {
    "type": "object",
    "properties": {"found": {"type": "boolean"}, "quote": {"type": "string"}},
    "required": ["found", "quote"],
}

PROMPT = (
    "记忆库里的记录：\n{memories}\n\n问题：{question}\n\n"
    "这些记录里是否写有这个问题的答案？答案必须是记录里明确写出的内容。"
    "如果有，found 为 true，并把写有答案的那句原文抄在 quote 里；"
    "如果记录只是话题相近、没有写出答案，found 为 false，quote 为空字符串。"
)


def chosen_questions(questions: list[dict[str, Any]], answerable: int) -> list[dict[str, Any]]:
    """Every question with nothing to recall, and every n-th answerable one (``answerable`` in all)."""
    from evaluation.multisession import NO_RECALL

    unanswerable = [q for q in questions if q["category"] in NO_RECALL]
    others = [q for q in questions if q["category"] not in NO_RECALL]
    step = max(1, len(others) // max(1, answerable))
    return unanswerable + others[::step][:answerable]


def hit_text(hit) -> str:
    """What the reader sees of a hit: the note or the message."""
    text = hit.note.content if hit.note is not None else hit.message.content
    return " ".join(text.split())[:400]


def main() -> None:
    from infra.llm import LLMClient
    from infra.llm.switch import offline_only
    from memory.models import Matter
    from recall import search_memory
    from evaluation.multisession import NO_RECALL, load_set
    from evaluation.multisession.runner import DEPTH, import_set

    client = LLMClient.from_settings()
    if client is None:
        raise SystemExit("LLM_BASE_URL is not set: this bench measures the configured LLM as a reader")
    top = int(os.environ.get("BENCH_READ_TOP", "5"))
    data = load_set(CONSULTATIONS).select(split="dev")
    questions = chosen_questions(data.questions, int(os.environ.get("BENCH_ANSWERABLE", "24")))
    rows = []
    with transaction.atomic():
        with offline_only():
            imported = import_set(data)
        for question in questions:
            user = imported.users[question["user"]]
            firm = imported.user_firm[question["user"]]
            matter_id = None
            if question.get("matter"):
                matter_id = Matter.objects.get(firm=firm, reference=question["matter"]).pk
            result = search_memory(user, question["question"], k=DEPTH, strategy="layered", matter_id=matter_id,
                                   context="\n".join(question.get("context") or ()))
            gold = {imported.pk_of[external_id] for external_id in question["gold"]}
            recalled = bool(gold) and gold <= set().union(*(set(hit.source_message_ids) for hit in result.hits))
            texts = [hit_text(hit) for hit in result.hits[:top]]
            started = time.monotonic()
            found: bool | None = None
            error = ""
            if texts:
                try:
                    reply = client.complete_json(
                        PROMPT.format(memories="\n".join(f"- {t}" for t in texts), question=question["question"]),
                        schema=FOUND_SCHEMA, schema_name="answer_found", max_tokens=120,
                        example={"found": False, "quote": ""},
                    )
                    found = bool(reply.get("found"))
                except Exception as exc:  # noqa: BLE001 - counted and shown, the run goes on
                    error = str(exc)[:200]
            rows.append({"id": question["id"], "category": question["category"], "hits": len(result.hits),
                         "found": found, "recalled": recalled, "error": error,
                         "seconds": round(time.monotonic() - started, 1)})
            print(f"{question['id']:8s} {question['category']:16s} hits {len(result.hits):2d} "
                  f"found {found!s:5s} recalled {recalled!s:5s} {rows[-1]['seconds']:5.1f} s {error}", flush=True)
        transaction.set_rollback(True)
    unanswerable = [r for r in rows if r["category"] in NO_RECALL]
    answerable = [r for r in rows if r["category"] not in NO_RECALL]
    blank = lambda r: r["hits"] == 0 or r["found"] is False  # noqa: E731
    summary = {
        "model": client.config.model, "read_top": top,
        "unanswerable": len(unanswerable), "unanswerable_blanked": sum(map(blank, unanswerable)),
        "answerable": len(answerable), "answerable_blanked": sum(map(blank, answerable)),
        "recalled_lost": sum(1 for r in answerable if r["recalled"] and blank(r)),
        "recalled": sum(1 for r in answerable if r["recalled"]),
        "errors": sum(1 for r in rows if r["error"]),
        "seconds_per_question": round(sum(r["seconds"] for r in rows) / max(1, len(rows)), 1),
    }
    print(json.dumps(summary, ensure_ascii=False))
    out = Path(settings.DATA_DIR) / "bench_answerability_llm.json"
    out.write_text(json.dumps({"summary": summary, "rows": rows}, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"written to {out}")
