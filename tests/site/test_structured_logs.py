"""Structured logs (docs/operations.md, "Logs"): the JSON formatter writes one valid JSON object
per line whatever a record holds; an HTTP request gets an id (the caller's, when well-formed),
returned in ``X-Request-ID`` and on its log line with the user and their firms — never the
query string."""
from __future__ import annotations

import io
import json
import logging
import os
import re
import subprocess
import sys
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest
from django.test import Client

from infra.logs import bind, content_lengths, log_event
from infra.logs import requests as request_logs
from infra.logs.context import request_id_from
from infra.logs.formatters import ContextFilter, JsonFormatter, TextFormatter
from tests.chat.conftest import open_socket  # imports the ASGI app, which configures logging: before json_log
from tests.fake_llm.replies import text_reply

GENERATED_ID = re.compile(r"[0-9a-f]{32}")


@pytest.fixture
def json_log():
    """The lines our loggers write while the test runs, formatted as LOG_FORMAT=json does and
    parsed back (a line that is not JSON fails the parse)."""
    request_logs._firms_cache.clear()  # a user id of an earlier test's world may name other firms
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(ContextFilter())
    logger = logging.getLogger("legalmem")
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)

    def lines() -> list[dict]:
        return [json.loads(line) for line in stream.getvalue().splitlines()]

    try:
        yield lines
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def record(message: str, *, exc_info=None, **extra) -> logging.LogRecord:
    made = logging.LogRecord("legalmem.test", logging.WARNING, __file__, 1, message, None, exc_info)
    for name, value in extra.items():
        setattr(made, name, value)
    return made


def test_a_record_is_one_line_of_valid_json_whatever_it_holds():
    try:
        raise ValueError("bad\nthing")
    except ValueError:
        failure = sys.exc_info()
    odd = {"note_id": uuid.UUID(int=7), "at": datetime(2026, 1, 2, tzinfo=timezone.utc), "text": 'a "quoted"\nline'}
    made = record("first line\nsecond line \u2028 押金", exc_info=failure,
                  ids={"request_id": "r-1"}, fields={**odd, "level": "forged"})
    line = JsonFormatter().format(made)
    assert "\n" not in line
    assert line.isascii()
    parsed = json.loads(line)
    assert parsed["message"] == "first line\nsecond line \u2028 押金"
    assert parsed["level"] == "warning"  # a field cannot overwrite the fixed keys
    assert parsed["logger"] == "legalmem.test"
    assert parsed["request_id"] == "r-1"
    assert parsed["note_id"] == str(uuid.UUID(int=7))
    assert parsed["at"].startswith("2026-01-02")
    assert parsed["exc_type"] == "ValueError"
    assert "Traceback" in parsed["exc"]
    assert datetime.fromisoformat(parsed["ts"]).tzinfo is not None


def test_the_text_format_shows_the_same_fields_as_key_value():
    line = TextFormatter().format(record("http_request", ids={"request_id": "r-2"}, fields={"status": 200}))
    assert line.endswith("legalmem.test: http_request request_id=r-2 status=200")


def test_bound_ids_reach_every_line_written_inside_and_end_with_the_block(json_log):
    logger = logging.getLogger("legalmem.test")
    with bind(request_id="outer", user_id=3):
        with bind(turn_id=9, matter_id=None):
            log_event(logger, "inner", outcome="ok", skipped=None)
        logger.info("plain %s", "line")
    logger.info("outside")
    inner, plain, outside = json_log()
    assert {k: inner[k] for k in ("event", "message", "request_id", "user_id", "turn_id", "outcome")} == {
        "event": "inner", "message": "inner", "request_id": "outer", "user_id": 3, "turn_id": 9, "outcome": "ok"}
    assert "matter_id" not in inner
    assert "skipped" not in inner
    assert plain["message"] == "plain line"
    assert plain["request_id"] == "outer"
    assert "turn_id" not in plain
    assert "request_id" not in outside


def test_content_lengths_are_logged_only_when_the_setting_says_so(settings):
    settings.LOG_CONTENT_LENGTHS = False
    assert content_lengths(question="押金什么时候退？") == {}
    settings.LOG_CONTENT_LENGTHS = True
    assert content_lengths(question="押金什么时候退？", reply=None) == {"question_chars": 8, "reply_chars": 0}


@pytest.mark.parametrize("incoming, kept", [
    ("4bf92f3577b34da6a3ce929d0e0e4736", True),
    ("edge-lb:1f2e.7", True),
    ("", False),
    ("has space", False),
    ('quote"injection', False),
    ("line\nbreak", False),
    ("x" * 129, False),
    ("-leading-dash", False),
])
def test_an_incoming_request_id_is_kept_only_when_well_formed(incoming, kept):
    assert (request_id_from(incoming) == incoming) is kept
    if not kept:
        assert GENERATED_ID.fullmatch(request_id_from(incoming))


@pytest.mark.django_db
def test_each_request_gets_one_line_with_its_id_user_and_firms_and_no_query_string(world, json_log):
    alice, charlie = Client(), Client()
    alice.force_login(world.alice)
    charlie.force_login(world.charlie)
    mine = alice.get("/api/memory/search?query=押金什么时候退", HTTP_X_REQUEST_ID="proxy-id-1")
    theirs = charlie.get("/chat/", HTTP_X_REQUEST_ID="bad id with spaces")
    anonymous = Client().get("/healthz")
    alice.get("/healthz")  # a probe that never looks at the user loads no session for its line
    assert mine["X-Request-ID"] == "proxy-id-1"
    assert GENERATED_ID.fullmatch(theirs["X-Request-ID"])
    assert GENERATED_ID.fullmatch(anonymous["X-Request-ID"])
    requests = [line for line in json_log() if line.get("event") == "http_request"]
    by_id = {line["request_id"]: line for line in requests}
    assert len(requests) == 4
    assert {"proxy-id-1", theirs["X-Request-ID"], anonymous["X-Request-ID"]} < set(by_id)
    first = by_id["proxy-id-1"]
    assert first["user_id"] == world.alice.pk
    assert first["firm_ids"] == [world.firm_a.pk]
    assert first["method"] == "GET"
    assert first["path"] == "/api/memory/search"
    assert first["status"] == mine.status_code
    assert first["duration_ms"] >= 0
    outsider = by_id[theirs["X-Request-ID"]]
    assert outsider["user_id"] == world.charlie.pk
    assert outsider["firm_ids"] == [world.firm_b.pk]
    probe = by_id[anonymous["X-Request-ID"]]
    assert probe["status"] == 200
    assert "user_id" not in probe
    assert "firm_ids" not in probe
    assert "user_id" not in requests[-1]
    assert requests[-1]["path"] == "/healthz"
    everything = json.dumps(json_log(), ensure_ascii=False)
    assert "押金" not in everything
    assert "query=" not in everything


def manage(args: list[str], env_changes: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``manage.py`` in a fresh process whose LOG_* and production settings are only these."""
    env = {key: value for key, value in os.environ.items() if not key.startswith(("LOG_", "LEGALMEM_PRODUCTION"))}
    env.update({"DATABASE_URL": "postgresql://u@localhost/db", **env_changes})
    return subprocess.run([sys.executable, "manage.py", *args], cwd=Path(__file__).resolve().parents[2], env=env,
                          capture_output=True, text=True, timeout=180)


def formatter_with(env_changes: dict[str, str]) -> str:
    """The class of the formatter Django's LOGGING gave our loggers' handler under these settings."""
    code = ("import logging; from django.conf import settings; "
            "print(type(logging.getLogger('legalmem').handlers[0].formatter).__name__, settings.LOG_LEVEL)")
    result = manage(["shell", "-c", code], {"SECRET_KEY": "x" * 40, **env_changes})
    assert result.returncode == 0, result.stderr
    return result.stdout.strip().splitlines()[-1]


@pytest.mark.subprocess
def test_json_is_the_production_default_text_the_development_one_and_each_can_be_chosen():
    assert formatter_with({"LEGALMEM_PRODUCTION": "1"}) == "JsonFormatter INFO"
    assert formatter_with({"LEGALMEM_PRODUCTION": "1", "LOG_FORMAT": "text"}) == "TextFormatter INFO"
    assert formatter_with({}) == "TextFormatter INFO"


@pytest.mark.subprocess
@pytest.mark.parametrize("env_changes, variable", [
    ({"LOG_FORMAT": "xml"}, "LOG_FORMAT"),
])
def test_a_malformed_log_setting_is_one_line_naming_the_variable(env_changes, variable):
    result = manage(["check"], {"SECRET_KEY": "x" * 40, **env_changes})
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("configuration error: "), result.stderr
    assert variable in lines[0], result.stderr


def test_a_job_line_says_how_the_run_ended_and_a_raised_error_by_its_type_only(json_log):
    from prometheus_client import REGISTRY

    from infra.logs.jobs import job_run

    def runs(outcome: str) -> float:
        return REGISTRY.get_sample_value("legalmem_jobs_total", {"job": "test_job", "outcome": outcome}) or 0.0

    before = {outcome: runs(outcome) for outcome in ("done", "retry", "error")}
    with job_run("test_job", turn_id=5) as run:
        logging.getLogger("legalmem.test").warning("inside")
        run.note(messages=3)
    with job_run("test_job", turn_id=6) as run:
        run.note(outcome="retry", attempts=2)
    with pytest.raises(KeyError), job_run("test_job", turn_id=7):
        raise KeyError("租客的押金五千元")
    inside, done, retry, failed = json_log()
    assert inside["job"] == "test_job"
    assert inside["turn_id"] == 5
    assert "event" not in inside
    assert (done["event"], done["outcome"], done["turn_id"], done["messages"]) == ("job", "done", 5, 3)
    assert (retry["outcome"], retry["attempts"], retry["turn_id"]) == ("retry", 2, 6)
    assert (failed["outcome"], failed["error"], failed["level"]) == ("error", "KeyError", "error")
    assert "押金" not in json.dumps(json_log(), ensure_ascii=False)
    assert {outcome: runs(outcome) - before[outcome] for outcome in before} == {"done": 1, "retry": 1, "error": 1}


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_a_websocket_turn_logs_lengths_only_when_asked(world, llm_online, json_log, settings):
    """The consumer test helpers against the fake LLM: with LOG_CONTENT_LENGTHS the turn's line
    says how long the question and the reply were, and still not what they said."""
    question, answer = "押金什么时候能退？", "结论：七日内退还。"
    settings.LOG_CONTENT_LENGTHS = True
    llm_online.script(text_reply(answer))
    socket = await open_socket(world.alice)
    assert (await socket.connect())[0]
    assert (await socket.receive_json_from(timeout=5))["type"] == "ready"
    await socket.send_json_to({"type": "ask", "question": question, "matter_id": world.matter_deposit.pk})
    while (frame := await socket.receive_json_from(timeout=30))["type"] != "done":
        pass
    await socket.disconnect()
    turn = one_line(json_log(), "chat_turn")
    assert turn["question_chars"] == len(question)
    assert turn["reply_chars"] == len(frame["reply"]) and frame["reply"].endswith(answer)  # the reply as saved
    assert turn["message_id"] == frame["message_id"]
    assert turn["user_id"] == world.alice.pk
    assert GENERATED_ID.fullmatch(turn["request_id"])  # no X-Request-ID on the handshake: a new one
    assert one_line(json_log(), "ws_connection")["request_id"] == turn["request_id"]
    logged = json.dumps(json_log(), ensure_ascii=False)
    assert question not in logged
    assert answer not in logged


def one_line(lines: list[dict], event: str) -> dict:
    found = [line for line in lines if line.get("event") == event]
    assert len(found) == 1, found
    return found[0]


def test_a_refused_request_is_one_log_line_without_a_traceback(world):
    """A 403 (bob may not forget a firm-wide note: PermissionDenied) is logged by Django with the
    exception attached; through our LOGGING it is one line, its reason and path, no traceback."""
    from memory.models import MemoryScope
    from tests.clients import logged_in

    law = world.note("消费者可就质量问题主张退换修。", scope=MemoryScope.GENERAL_LAW, category="law")

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(TextFormatter())
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        response = logged_in(world.bob).post(f"/memory/{law.pk}/forget/")
    finally:
        logger.removeHandler(handler)
    assert response.status_code == 403
    written = stream.getvalue()
    assert len(written.splitlines()) == 1, written
    assert "Forbidden (Permission denied)" in written and f"/memory/{law.pk}/forget/" in written
    assert "Traceback" not in written


def test_a_server_error_keeps_its_traceback():
    """Only the client's errors lose the exception: a 5xx record keeps it, for whoever fixes it."""
    from infra.logs.formatters import ClientErrorsOneLine

    try:
        raise RuntimeError("broken")
    except RuntimeError:
        failed = record("Internal Server Error: /x/", exc_info=sys.exc_info(), status_code=500)
        refused = record("Forbidden (Permission denied): /x/", exc_info=sys.exc_info(), status_code=403)
    one_line = ClientErrorsOneLine()
    assert one_line.filter(failed) and one_line.filter(refused)
    assert "Traceback" in TextFormatter().format(failed)
    assert TextFormatter().format(refused).count("\n") == 0
