"""The write path with a REAL local model (not in CI): one client's dev-split sessions of the
consultation set imported through llama.cpp, beside the offline engine and the raw turns.

Issue 30, item 4. In a throw-away database ``legalmem_writepath`` on the data folder's server
(dropped at the end), the chosen sessions of the consultation set's **dev split**
(``evaluation/consultations``; questions whose gold lies in those sessions) are
imported twice through ``import_set`` — once with the offline engine (``offline_only()``),
once with the LLM of ``LLM_BASE_URL`` behind a counting proxy (``bench_real_llm.CountingProxy``)
— and every question is asked through ``ask`` (the product's ``search_memory``; the raw-turn
baselines dense / bm25 / RRF are computed from the same messages). Reported per engine:

- recall: R@5, R@10, MRR of the product and of the raw turns (RRF, dense, bm25);
- notes per turn (active notes written / turns), extraction status, items kept;
- items rejected and why (``TurnExtraction.rejected``, grouped by reason);
- corrections taken (``RoutingDecision`` UPDATEs, each with the old and the new text);
- unsupported notes: notes whose numbers, dates or names do not appear in their source turn
  (the name the speaker gave earlier in the matter counts as said)
  (``remember.extraction.grounding.unsaid_number`` against the turn's messages, and every Chinese
  name ``lexicon.person_names`` finds in the note must be in the turn).

Sessions: ``BENCH_SESSIONS`` (comma-separated ids) or ``BENCH_USER`` (default ``b_zhou``: 13
sessions, 38 turns, one client of the set's part B) with ``BENCH_MAX_SESSIONS`` (default all).
At 2–11 tokens/s on two shared cores a turn takes ~20–90 s; choose a subset that finishes in
time. ``BENCH_ENGINES`` (default ``offline,llm``).

Run (the llama.cpp server of docs/story-and-real-llm.md on port 8088):

    LLM_BASE_URL=http://127.0.0.1:8088/v1 LLM_MODEL=qwen-local LLM_CONTEXT_TOKENS=4096 \\
    LLM_MAX_CONCURRENT_REQUESTS=1 LLM_TIMEOUT_SECONDS=300 LLM_STALL_SECONDS=60 \\
    LEGALMEM_DATA_DIR=/tmp/llm-data \\
    /work/main/.venv/bin/python -m legalmem_site.launcher manage shell -c \\
      "from bench.bench_write_path_llm import main; main()"

Figures go to stdout and to ``$LEGALMEM_DATA_DIR/bench_write_path_llm.json``.
"""
from __future__ import annotations

import json
import os
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection

from bench.bench_real_llm import CountingProxy, format_rejections

DB_NAME = "legalmem_writepath"
CONSULTATIONS = Path(__file__).resolve().parent.parent / "evaluation" / "consultations"


def chosen_set():
    """The dev split of the consultation set, cut to the chosen sessions."""
    from evaluation.multisession import load_set

    data = load_set(CONSULTATIONS)
    sessions = [s.strip() for s in os.environ.get("BENCH_SESSIONS", "").split(",") if s.strip()]
    if not sessions:
        user = os.environ.get("BENCH_USER", "b_zhou")
        sessions = [c["id"] for _, c in data.conversations() if c["user"] == user]
        limit = int(os.environ.get("BENCH_MAX_SESSIONS", "0") or 0)
        sessions = sessions[:limit] if limit else sessions
    if not sessions:
        raise SystemExit("no session chosen: check BENCH_SESSIONS / BENCH_USER")
    return data.select(sessions=sessions, split="dev"), sessions


def _reason_kind(reason: str) -> str:
    """A rejection reason without its item number and quoted text, for grouping."""
    reason = re.sub(r"^item \d+:\s*", "", str(reason))
    reason = re.sub(r"'[^']*'|\"[^\"]*\"|「[^」]*」", "'…'", reason)
    reason = re.sub(r"\d[\d,.]*\S*", "N", reason)
    return reason[:90]


def unsupported(content: str, said: str, year: int | None = None) -> str | None:
    """What ``content`` states that ``said`` (its source turn) does not: a number, a date or a
    name — or None. A year equal to the year the turn was said in may be added to a date the
    turn names ("9月9日" → "2026年9月9日": dates are resolved against the day said)."""
    from remember.extraction import lexicon
    from remember.extraction.grounding import unsaid_number

    if year is not None:
        content = re.sub(rf"{year}\s*年(?=\s*\d{{1,2}}\s*月)", "", content)
        content = re.sub(rf"\b{year}-(\d{{1,2}})-(\d{{1,2}})\b", r"\1月\2日", content)
    number = unsaid_number(content, said)
    if number:
        return f"number/date {number}"
    missing = [name for name in lexicon.person_names(content) if name not in said]
    return f"name {missing[0]}" if missing else None


def speakers_name(message_ids: list[int]) -> str:
    """The name the speaker of the first of ``message_ids`` gave earlier in the matter: notes
    may call them by it though the turn only says "我"."""
    from memory.models import Message
    from remember.client_name import client_name_before

    first = Message.objects.filter(pk__in=message_ids, role=Message.Role.USER).select_related("conversation").first()
    return client_name_before(first) if first else ""


def write_stats(firm_ids: list[int]) -> dict[str, Any]:
    """What the write path did in these firms: turns, notes, rejections, corrections, and notes
    that state something their source turn does not."""
    from memory.models import Message, Note, RoutingDecision, TurnExtraction

    turns = list(TurnExtraction.objects.filter(firm_id__in=firm_ids))
    decisions = list(RoutingDecision.objects.filter(firm_id__in=firm_ids).select_related("note", "previous"))
    notes = list(Note.objects.filter(firm_id__in=firm_ids).exclude(memory_scope="user_profile"))
    texts = dict(Message.objects.filter(firm_id__in=firm_ids).values_list("pk", "content"))
    years = {pk: at.year for pk, at in Message.objects.filter(firm_id__in=firm_ids).values_list("pk", "said_at") if at}
    rejected = [reason for turn in turns for reason in (turn.rejected or [])]
    items = sum(len(turn.items or []) for turn in turns)
    bad = []
    for note in notes:
        said = "\n".join(texts.get(pk, "") for pk in note.source_message_ids)
        said += "\n" + speakers_name(note.source_message_ids)  # "用户" becomes it (remember/client_name.py)
        year = next((years[pk] for pk in note.source_message_ids if pk in years), None)
        why = unsupported(note.content, said, year) if said else "no source message"
        if why:
            bad.append({"note": note.content[:160], "category": note.category, "speaker": note.speaker, "why": why})
    active = [n for n in notes if n.status == "active"]
    updates = [{"old": d.previous.content[:120] if d.previous else "", "new": d.content[:120], "reason": d.reason[:200]}
               for d in decisions if d.action == "update"]
    return {
        "turns": len(turns),
        "turn_status": dict(Counter(t.status for t in turns)),
        "engines": dict(Counter(t.engine.split(":")[0] for t in turns)),
        "items_kept": items,
        "notes_written": len(notes),
        "notes_active": len(active),
        "notes_per_turn": round(len(notes) / len(turns), 2) if turns else None,
        "notes_by_category": dict(Counter(n.category for n in notes)),
        "decisions": dict(Counter(d.action for d in decisions)),
        "rejected": len(rejected),
        "rejected_by_reason": dict(Counter(_reason_kind(r) for r in rejected).most_common(12)),
        "rejected_examples": [str(r)[:200] for r in rejected[:12]],
        "corrections_taken": len(updates),
        "corrections": updates,
        "unsupported_notes": len(bad),
        "unsupported_share": round(len(bad) / len(notes), 3) if notes else None,
        "unsupported_examples": bad[:15],
        # The client called "用户" where the matter knows their name (issue 30); preferences and
        # statutes keep their words (docs/write-path.md, "Speaker rules").
        "notes_saying_user": [n.content[:160] for n in notes if "用户" in n.content and n.category not in ("preference", "law")],
        "failures": [f"{t.pk} {t.status}: {t.last_error[:160]}" for t in turns if t.status not in ("done", "skipped")],
    }


def recall(report) -> dict[str, Any]:
    """Overall (recall questions) and per-category figures of the product and the raw turns."""
    rows = {(r["category"], r["language"]): r for r in report.rows()}
    overall = rows.get(("all", "all"), {})
    figures = {system: overall.get(system) for system in ("product", "rrf", "dense", "bm25")}
    per_category = {category: {"questions": row["questions"], "product": row["product"]["r@10"],
                               "rrf": row["rrf"]["r@10"], "noted": row["noted"]}
                    for (category, language), row in rows.items()
                    if language == "all" and "product" in row and category != "all"}
    leaks = sum(len(o.leaks) for o in report.outcomes)
    return {"questions": len(report.outcomes), "recall_questions": overall.get("questions"), "overall": figures,
            "noted": overall.get("noted"), "per_category_r@10": per_category, "leaks": leaks}


def run_engine(engine: str, data, proxy: CountingProxy | None) -> dict[str, Any]:
    """Import the set with one engine and ask its questions."""
    from infra.llm import offline_only
    from evaluation.multisession.runner import ask, import_set

    started = time.perf_counter()
    done = [0]

    def progress(finished: int, total: int) -> None:
        if finished and finished != done[0]:
            done[0] = finished
            print(f"[bench] {engine}: turn {finished}/{total} after {time.perf_counter() - started:.0f} s", flush=True)

    if proxy is not None:
        proxy.phase = engine
    if engine == "offline":
        with offline_only():
            imported = import_set(data, progress)
            report = ask(data, imported)
    else:
        imported = import_set(data, progress)
        report = ask(data, imported)
    stats = write_stats(imported.firm_ids)
    result = {"engine": engine, "import_seconds": imported.seconds,
              "seconds_per_turn": round(imported.seconds / stats["turns"], 1) if stats["turns"] else None,
              "import_summary": imported.summary[-400:], "recall": recall(report), "write": stats}
    if proxy is not None and engine != "offline":
        records = proxy.of(engine)
        rejections, wasted = format_rejections(records)
        result["requests"] = {"count": len(records), "per_turn": round(len(records) / stats["turns"], 2)
                              if stats["turns"] else None, "by_status": dict(Counter(str(r.status) for r in records)),
                              "format_rejections": rejections, "wasted": wasted,
                              "errors": sorted({r.error for r in records if r.error})[:5]}
    _print(result)
    return result


def _fmt(figures: dict[str, float] | None) -> str:
    if not figures:
        return "n/a"
    return f"R@5 {figures['r@5']:.3f} R@10 {figures['r@10']:.3f} MRR {figures['mrr']:.3f}"


def _print(result: dict[str, Any]) -> None:
    rec, write = result["recall"], result["write"]
    print(f"[bench] === {result['engine']}: {write['turns']} turns in {result['import_seconds']} s "
          f"({result['seconds_per_turn']} s a turn); status {write['turn_status']}", flush=True)
    print(f"[bench]   recall ({rec['recall_questions']} recall questions of {rec['questions']}): "
          f"product {_fmt(rec['overall']['product'])} | raw RRF {_fmt(rec['overall']['rrf'])} | "
          f"dense {_fmt(rec['overall']['dense'])} | bm25 {_fmt(rec['overall']['bm25'])}; noted {rec['noted']}; "
          f"leaks {rec['leaks']}", flush=True)
    print(f"[bench]   notes {write['notes_written']} ({write['notes_per_turn']} a turn; active {write['notes_active']}), "
          f"items kept {write['items_kept']}, rejected {write['rejected']}, decisions {write['decisions']}, "
          f"corrections taken {write['corrections_taken']}, unsupported notes {write['unsupported_notes']} "
          f"({write['unsupported_share']}), notes saying 用户 {len(write['notes_saying_user'])}", flush=True)
    for reason, count in write["rejected_by_reason"].items():
        print(f"[bench]     rejected ×{count}: {reason}", flush=True)
    for update in write["corrections"]:
        print(f"[bench]     UPDATE {update['old']!r} → {update['new']!r}", flush=True)
    for bad in write["unsupported_examples"][:8]:
        print(f"[bench]     unsupported ({bad['why']}, {bad['category']}, {bad['speaker']}): {bad['note']}", flush=True)
    if "requests" in result:
        print(f"[bench]   requests {result['requests']}", flush=True)


def _drop(old_name: str) -> None:
    """Drop the throw-away database; the bulk import's encoder thread may still hold a session."""
    from django.db import connections

    connections.close_all()
    with connection._nodb_cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                       "AND pid <> pg_backend_pid()", [DB_NAME])
    connection.creation.destroy_test_db(old_name, verbosity=0)


def main() -> None:
    engines = [e.strip() for e in os.environ.get("BENCH_ENGINES", "offline,llm").split(",") if e.strip()]
    upstream = os.environ.get("LLM_BASE_URL", "").strip()
    if "llm" in engines and not upstream:
        raise SystemExit("set LLM_BASE_URL (and LLM_MODEL) to the real OpenAI-compatible server")
    data, sessions = chosen_set()
    turns = sum(1 for _, c in data.conversations() for m in c["messages"] if m["role"] == "user")
    print(f"[bench] dev split, sessions {', '.join(sessions)}: {turns} turns, {len(data.questions)} questions; "
          f"engines {engines}; LLM {settings.LLM_MODEL} at {upstream or '-'}; load {os.getloadavg()[0]:.1f}", flush=True)
    proxy = None
    if upstream:
        proxy = CountingProxy(upstream)
        settings.LLM_BASE_URL = proxy.start()
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = DB_NAME
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    out = Path(settings.DATA_DIR) / "bench_write_path_llm.json"
    results: list[dict[str, Any]] = []
    try:
        for engine in engines:
            results.append(run_engine(engine, data, proxy))
            out.write_text(json.dumps({"sessions": sessions, "turns": turns, "model": settings.LLM_MODEL,
                                       "results": results}, ensure_ascii=False, indent=1), encoding="utf-8")
    finally:
        if proxy is not None:
            proxy.stop()
        _drop(old_name)
    print(f"[bench] details: {out}", flush=True)
