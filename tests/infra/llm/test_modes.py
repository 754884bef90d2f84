"""The JSON mode that works on a server is remembered in the database: every process and
worker shares it, it is probed again after ``LLM_JSON_MODE_REPROBE_SECONDS``, and operators
read it (only they) in admin."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from remember.extraction import KNOWLEDGE_ENVELOPE, KNOWLEDGE_SCHEMA
from infra.llm import JSONMode, LLMClient, Role
from memory.models import LLMServerMode, LLMServerSpeed
from tests.factories import UserFactory
from tests.fake_llm import json_reply

pytestmark = pytest.mark.django_db

REPLY = {"knowledge": [{"content": "租期自2024年1月1日起一年", "category": "事实"}]}


def ask(client: LLMClient) -> dict:
    return client.complete_json(
        "提取知识", schema=KNOWLEDGE_SCHEMA, schema_name="knowledge_extraction", envelope=KNOWLEDGE_ENVELOPE
    )


def test_a_refused_format_is_learnt_once_for_every_client(llm_online):
    llm_online.profile = "llamacpp"
    llm_online.script(json_reply(REPLY), json_reply(REPLY))

    first = LLMClient.from_settings(Role.EXTRACTION)
    ask(first)
    second = LLMClient.from_settings(Role.EXTRACTION)  # another worker: a new client, same database
    ask(second)

    assert [(r.response_format_type, r.status) for r in llm_online.chat_requests()] == [
        ("json_schema", 500), ("json_object", 200), ("json_object", 200)]
    row = LLMServerMode.objects.get(base_url=llm_online.base_url, model=llm_online.model)
    assert row.json_mode == "json_object"
    assert "response_format" in row.last_error


def test_the_refused_format_is_probed_again_after_the_interval(llm_online, settings):
    settings.LLM_JSON_MODE_REPROBE_SECONDS = 3600
    LLMServerMode.objects.create(
        base_url=llm_online.base_url, model=llm_online.model, json_mode="json_object",
        probed_at=timezone.now() - timedelta(hours=2), last_error="HTTP 500",
    )
    llm_online.script(json_reply(REPLY), json_reply(REPLY))

    client = LLMClient.from_settings(Role.EXTRACTION)
    assert client.json_mode is JSONMode.JSON_SCHEMA  # stale: try the better mode again
    ask(client)  # this server now takes json_schema (the fake's openai profile)
    ask(client)

    assert [r.response_format_type for r in llm_online.chat_requests()] == ["json_schema", "json_schema"]
    row = LLMServerMode.objects.get()
    assert row.json_mode == "json_schema"
    assert row.probed_at > timezone.now() - timedelta(minutes=1)
    assert row.last_error == ""


def test_a_fresh_refusal_is_not_probed_again(llm_online, settings):
    settings.LLM_JSON_MODE_REPROBE_SECONDS = 3600
    LLMServerMode.objects.create(
        base_url=llm_online.base_url, model=llm_online.model, json_mode="json_object",
        probed_at=timezone.now() - timedelta(minutes=5),
    )
    llm_online.script(json_reply(REPLY))

    ask(LLMClient.from_settings(Role.EXTRACTION))

    assert [r.response_format_type for r in llm_online.chat_requests()] == ["json_object"]


def client_of(user) -> Client:
    """A Django test client logged in as ``user``."""
    client = Client()
    client.force_login(user)
    return client


def test_only_operators_read_server_modes_in_admin(world, llm_online):
    row = LLMServerMode.objects.create(
        base_url=llm_online.base_url, model=llm_online.model, json_mode="json_object", probed_at=timezone.now()
    )
    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    url = f"/admin/memory/llmservermode/{row.pk}/change/"

    page = client_of(operator).get(url)
    assert page.status_code == 200
    assert "json_object" in page.content.decode()
    assert client_of(operator).post(url, {"json_mode": "plain"}).status_code == 403  # read-only
    for firm_admin in (world.alice, world.charlie):  # staff of a firm, not operators
        assert client_of(firm_admin).get(url).status_code == 403
        assert client_of(firm_admin).get("/admin/memory/llmservermode/").status_code == 403
    assert client_of(world.bob).get(url).status_code == 302  # not staff: to the login page
    row.refresh_from_db()
    assert row.json_mode == "json_object"


def test_only_operators_read_server_speeds_in_admin(world, llm_online):
    row = LLMServerSpeed.objects.create(base_url=llm_online.base_url, model=llm_online.model,
                                        tokens_per_second=7.5, samples=3, measured_at=timezone.now())
    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    url = f"/admin/memory/llmserverspeed/{row.pk}/change/"

    listing = client_of(operator).get("/admin/memory/llmserverspeed/")
    assert listing.status_code == 200
    assert "7.5" in listing.content.decode()
    assert client_of(operator).post(url, {"tokens_per_second": "99"}).status_code == 403  # read-only
    for firm_admin in (world.alice, world.charlie):  # staff of a firm, not operators
        assert client_of(firm_admin).get(url).status_code == 403
    assert client_of(world.bob).get(url).status_code == 302  # not staff: to the login page
    row.refresh_from_db()
    assert row.tokens_per_second == 7.5
