"""``evaluate_notes --engine offline|llm --conversations …`` (issue 50: the note-truth figures for
the LLM path): offline sends no request even with a server configured; llm extracts every turn
through the configured server (the fake OpenAI-compatible one) and refuses loudly when there is
none, when it does not answer, or when a turn was not extracted by it."""
from __future__ import annotations

import socket
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from tests.fake_llm.replies import error_reply, json_reply

pytestmark = pytest.mark.django_db(transaction=False)

DEPOSIT = {"knowledge": [{"content": "林晓雯的押金是2000元，房东是周海峰。", "category": "事实", "confidence": 0.9}]}


def run(*args: str) -> str:
    out = StringIO()
    call_command("evaluate_notes", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_offline_is_the_default_and_sends_nothing_to_a_configured_server(llm_online):
    out = run("--conversations", "d01")

    assert "engine=offline  conversations=d01  turns=3" in out
    assert "extraction by engine and status: {'offline done': " in out
    assert "llm:" not in out
    assert llm_online.chat_requests() == []
    assert "correction success (old value in no active note, new value in one): 1.000 (1/1)" in out


def test_llm_extracts_every_turn_through_the_server_and_scores_only_the_subset(llm_online):
    llm_online.set_default(json_reply(DEPOSIT))

    out = run("--engine", "llm", "--conversations", "d01,d02", "--show", "d01")

    requests = llm_online.chat_requests()
    assert requests and all(r.response_format_type in ("json_schema", "json_object") for r in requests)
    assert "林晓雯刚把转账记录发我了" in "".join(r.user_content for r in requests)  # d01-u2 went to the model
    assert "engine=llm  conversations=d01,d02" in out
    assert f"'llm:{llm_online.model} done'" in out and "offline" not in out.split("\n")[1]
    assert "林晓雯的押金是2000元" in out  # --show d01 lists the model's note
    assert "notes saying 用户: 0" in out
    assert "documents: title read from the content 0/0" in out  # d03's lease is not in the subset


def test_llm_turns_the_server_did_not_extract_fail_the_command(llm_online):
    llm_online.set_default(error_reply(500, "model crashed"))

    with pytest.raises(CommandError, match="turn\\(s\\) were not extracted by the LLM"):
        run("--engine", "llm", "--conversations", "d01")


def test_llm_without_a_server_or_with_one_that_does_not_answer_is_refused(settings):
    settings.LLM_BASE_URL = ""
    with pytest.raises(CommandError, match="needs LLM_BASE_URL"):
        run("--engine", "llm", "--conversations", "d01")

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.LLM_BASE_URL = f"http://127.0.0.1:{port}/v1"
    with pytest.raises(CommandError, match=f"127.0.0.1:{port}/v1 does not answer GET /models"):
        run("--engine", "llm", "--conversations", "d01")


def test_an_unknown_conversation_or_engine_is_named():
    with pytest.raises(CommandError, match="unknown conversation\\(s\\) d99; dev has d01"):
        run("--conversations", "d01,d99")
    with pytest.raises(CommandError, match="invalid choice: 'gpt'"):
        run("--engine", "gpt")
