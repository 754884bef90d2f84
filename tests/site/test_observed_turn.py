"""One chat turn as an operator sees it (docs/operations.md, "Logs" and "Metrics"): a real
Daphne (``LOG_FORMAT=json``) serves a page and a websocket turn from the fake LLM, a real
``db_worker`` runs the turn's extraction and a navigation refresh; every line both processes
write is JSON and carries the ids, none holds the question, the reply or a note; and
``/metrics`` — adding up both processes — shows every series the issue names."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest
from django_tasks_db.models import DBTaskResult
from websockets.sync.client import connect

from bench.daphne import session_cookie
from memory.models import Note, TurnExtraction
from navigation.tasks import refresh_navigation_graphs_task
from tests.fake_llm.replies import json_reply, text_reply
from tests.live_server import test_database_url

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.live_server]

BASE_DIR = Path(__file__).resolve().parents[2]
TOKEN = "scrape-token-for-tests"
QUESTION = "房东扣下五千元押金迟迟不退，我该怎么办？"
ANSWER = "结论：可以书面催告房东在七日内退还押金。"
NOTE = "租客已于三月一日搬离并交还全部钥匙。"
EXTRACTED = "房东扣下租客五千元押金迟迟不退。"  # only what the client said (speaker rules)


@pytest.fixture
def observability_env(tmp_path) -> dict[str, str]:
    """What a production host sets for logs and metrics, for the server and the worker alike."""
    directory = tmp_path / "prometheus"
    directory.mkdir()
    return {"LOG_FORMAT": "json", "METRICS_TOKEN": TOKEN,
            "PROMETHEUS_MULTIPROC_DIR": str(directory)}


@pytest.fixture
def live_daphne_env(observability_env) -> dict[str, str]:
    return observability_env


@dataclass
class Observed:
    lines: list[dict]  # every line the server and the worker wrote, parsed
    raw: str
    done: dict  # alice's done frame
    turn: TurnExtraction
    tasks: dict[str, str]  # task path -> task id, as the worker ran them


def parse_lines(text: str, who: str) -> list[dict]:
    """Every non-empty line, each of which must be one JSON object."""
    parsed = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                parsed.append(json.loads(line))
            except json.JSONDecodeError:
                raise AssertionError(f"{who} line {number} is not JSON: {line[:300]!r}") from None
    return parsed


def wait_for(log: Path, event: str, count: int, timeout: float = 30) -> None:
    """Until the server has written ``count`` lines of ``event`` (a socket's line follows its close)."""
    deadline = time.monotonic() + timeout
    while log.read_text(errors="replace").count(f'"event": "{event}"') < count:
        assert time.monotonic() < deadline, f"fewer than {count} {event} lines: {log.read_text()[-3000:]}"
        time.sleep(0.2)


def ask(live, cookie: str, request_id: str, question: str, matter_id: int, until: str) -> list[dict]:
    frames = []
    with connect(live.ws_url, origin=live.url, open_timeout=10, close_timeout=5,
                 additional_headers={"Cookie": cookie, "X-Request-ID": request_id}) as socket:
        assert json.loads(socket.recv(timeout=30))["type"] == "ready"
        socket.send(json.dumps({"type": "ask", "question": question, "matter_id": matter_id}))
        while not frames or frames[-1]["type"] != until:
            frames.append(json.loads(socket.recv(timeout=60)))
    return frames


def run_worker(fake_llm, env: dict[str, str], log: Path) -> None:
    """``manage.py db_worker --batch``: runs what is queued, as a production worker does, then exits."""
    full_env = {**os.environ, "DATABASE_URL": test_database_url(), "LLM_BASE_URL": fake_llm.base_url,
                "LLM_MODEL": fake_llm.model, "LLM_API_KEY": "test-key", **env}
    with log.open("wb") as stderr:
        finished = subprocess.run(
            [sys.executable, "manage.py", "db_worker", "--batch", "--interval", "0", "--no-startup-delay"],
            cwd=BASE_DIR, env=full_env, stdout=subprocess.DEVNULL, stderr=stderr, timeout=300,
        )
    assert finished.returncode == 0, log.read_text(errors="replace")[-3000:]


@pytest.fixture
def observed(world, live_daphne, fake_llm, observability_env, tmp_path) -> Observed:
    world.note(NOTE, matter=world.matter_deposit)
    fake_llm.script(text_reply(ANSWER),
                    json_reply({"knowledge": [{"content": EXTRACTED, "category": "事实", "confidence": 0.9}]}))
    alice, charlie = session_cookie(world.alice), session_cookie(world.charlie)
    page = urllib.request.Request(f"{live_daphne.url}/chat/", headers={"Cookie": alice, "X-Request-ID": "page-1"})
    with urllib.request.urlopen(page, timeout=30) as response:
        assert response.status == 200
        assert response.headers["X-Request-ID"] == "page-1"
    done = ask(live_daphne, alice, "socket-1", QUESTION, world.matter_deposit.pk, "done")[-1]
    assert done["status"] == "complete"
    # the note recalled does not bear on the question: the answer says memory holds nothing first
    assert done["reply"] == "【记忆中没有这方面的记录】以下内容并非来自本所记忆，仅供参考：\n" + ANSWER
    assert done["notes"]
    refused = ask(live_daphne, charlie, "socket-2", QUESTION, world.matter_deposit.pk, "error")[-1]
    assert refused["code"] == "not_found"  # the outsider is told nothing about alice's matter
    wait_for(live_daphne.log, "ws_connection", 2)
    refresh_navigation_graphs_task.enqueue(world.firm_a.pk)
    worker_log = tmp_path / "worker.log"
    run_worker(fake_llm, observability_env, worker_log)
    server_text, worker_text = live_daphne.log_text(), worker_log.read_text(errors="replace")
    lines = parse_lines(server_text, "server") + parse_lines(worker_text, "worker")
    tasks = {task.task_path.rsplit(".", 1)[-1]: str(task.id) for task in DBTaskResult.objects.all()}
    turn = TurnExtraction.objects.get(assistant_message_id=done["message_id"])
    return Observed(lines, server_text + worker_text, done, turn, tasks)


def one(lines: list[dict], **match) -> dict:
    found = [line for line in lines if all(line.get(k) == v for k, v in match.items())]
    assert len(found) == 1, f"{len(found)} lines match {match}: {found}"
    return found[0]


def test_every_line_is_json_with_the_ids_and_no_content(world, observed):
    lines, done, turn = observed.lines, observed.done, observed.turn
    page = one(lines, event="http_request", request_id="page-1")
    assert page["user_id"] == world.alice.pk
    assert page["firm_ids"] == [world.firm_a.pk]
    assert page["status"] == 200
    assert page["path"] == "/chat/"
    assert page["duration_ms"] >= 0

    chat = one(lines, event="chat_turn", request_id="socket-1")
    assert chat["outcome"] == "complete"
    assert chat["duration_ms"] > 0
    assert chat["first_token_ms"] > 0
    assert {k: chat[k] for k in ("firm_id", "user_id", "matter_id", "conversation_id", "message_id",
                                 "user_message_id", "turn_id")} == {
        "firm_id": world.firm_a.pk, "user_id": world.alice.pk, "matter_id": world.matter_deposit.pk,
        "conversation_id": done["conversation_id"], "message_id": done["message_id"],
        "user_message_id": done["user_message_id"], "turn_id": turn.pk}
    assert "question_chars" not in chat  # LOG_CONTENT_LENGTHS is off by default
    socket = one(lines, event="ws_connection", request_id="socket-1")
    assert socket["user_id"] == world.alice.pk
    assert socket["firm_ids"] == [world.firm_a.pk]
    assert socket["turns"] == 1
    assert socket["frames_in"] == 1
    assert socket["frames_out"] > 3
    assert socket["outcome"] == "closed"
    assert socket["duration_ms"] > 0

    refused = one(lines, event="chat_turn", request_id="socket-2")
    assert refused["outcome"] == "rejected"
    assert refused["code"] == "not_found"
    assert refused["user_id"] == world.charlie.pk
    assert "firm_id" not in refused
    assert one(lines, event="ws_connection", request_id="socket-2")["firm_ids"] == [world.firm_b.pk]

    extraction = one(lines, event="job", job="extract_turn")
    assert extraction["outcome"] == "done" == TurnExtraction.objects.get(pk=turn.pk).status
    assert extraction["turn_id"] == turn.pk
    assert extraction["task_id"] == observed.tasks["extract_turn_task"]
    assert extraction["firm_id"] == world.firm_a.pk
    assert extraction["conversation_id"] == done["conversation_id"]
    assert extraction["attempts"] == 1
    assert extraction["duration_ms"] > 0
    indexing = one(lines, event="job", job="index_messages")
    assert indexing["conversation_id"] == done["conversation_id"]
    assert indexing["messages"] == 2
    assert indexing["task_id"] == extraction["task_id"]
    assert indexing["turn_id"] == turn.pk  # inside the turn job
    navigation = one(lines, event="job", job="navigation_refresh")
    assert navigation["firm_id"] == world.firm_a.pk
    assert navigation["outcome"] == "done"
    assert navigation["task_id"] == observed.tasks["refresh_navigation_graphs_task"]

    written = list(Note.objects.values_list("content", flat=True))
    assert EXTRACTED in written  # the job did write the note it must not log
    decoded = json.dumps(lines, ensure_ascii=False)
    for private in {QUESTION, ANSWER, NOTE, *written}:
        assert private not in decoded
        assert private not in observed.raw


def value(text: str, series: str) -> float:
    match = re.search(rf"^{re.escape(series)} ([0-9.e+-]+)$", text, re.M)
    assert match, f"{series} is not on /metrics"
    return float(match.group(1))


def test_metrics_show_every_series_of_the_issue_after_one_turn(live_daphne, observed):
    request = urllib.request.Request(f"{live_daphne.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        text = response.read().decode()
    nonzero = [
        'legalmem_http_requests_total{method="GET",status="2xx"}',
        'legalmem_http_request_seconds_count{method="GET"}',
        'legalmem_websocket_connections_total{outcome="accepted"}',
        'legalmem_websocket_frames_total{direction="in",type="ask"}',
        'legalmem_websocket_frames_total{direction="out",type="token"}',
        'legalmem_websocket_frames_total{direction="out",type="done"}',
        'legalmem_chat_turns_total{status="complete"}',
        'legalmem_chat_turn_seconds_count{status="complete"}',
        "legalmem_chat_first_token_seconds_count",
        'legalmem_chat_turn_rejections_total{code="not_found"}',
        'legalmem_llm_chat_requests_total{outcome="ok"}',
        'legalmem_search_seconds_count{strategy="layered"}',
        'legalmem_search_stage_seconds_count{stage="vector",strategy="layered"}',
        'legalmem_recalled_hits_total{layer="case"}',
        "legalmem_query_encode_seconds_count",
        'legalmem_embedding_seconds_count{kind="query"}',
        'legalmem_embedding_seconds_count{kind="passages"}',  # the worker's, added up by the server
        'legalmem_embedded_texts_total{kind="passages"}',
        'legalmem_jobs_total{job="extract_turn",outcome="done"}',
        'legalmem_jobs_total{job="index_messages",outcome="done"}',
        'legalmem_jobs_total{job="navigation_refresh",outcome="done"}',
        'legalmem_job_seconds_count{job="extract_turn"}',
        'legalmem_extraction_jobs{status="done"}',
        'legalmem_routing_decisions{action="add"}',
    ]
    missing = [series for series in nonzero if value(text, series) <= 0]
    assert not missing, f"zero after a turn: {missing}"
    assert re.search(r'^legalmem_llm_json_requests_total\{mode="[a-z_]+",outcome="ok"\} [1-9]', text, re.M)
    for present in ('legalmem_navigation_builds_total{kind="full"}', "legalmem_websocket_connections_open",
                    'legalmem_extraction_jobs{status="failed"}', 'legalmem_extraction_jobs{status="running"}',
                    'legalmem_extraction_jobs{status="pending"}', "legalmem_extraction_jobs_retried",
                    "legalmem_extraction_oldest_unfinished_seconds"):
        assert value(text, present) >= 0
    assert value(text, "legalmem_websocket_connections_open") == 0  # both sockets closed
