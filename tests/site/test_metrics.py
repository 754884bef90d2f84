"""/metrics for Prometheus (docs/operations.md, "Metrics"): off unless a token or addresses are
set, then the series the issue names, counted in this process and — under `make run`'s
multiprocess directory — across the server's processes."""
from __future__ import annotations

import re
import urllib.request

import pytest
from django.test import Client

from memory.models import Conversation
from remember.message_index import index_messages
from memory.services.conversations import save_message
from tests.clients import client_for
from tests.live_server import running_server

pytestmark = pytest.mark.django_db

TOKEN = "scrape-token-for-tests"


def value(text: str, series: str) -> float:
    """The value of one series line (name with labels) in an exposition, 0 when absent."""
    match = re.search(rf"^{re.escape(series)} ([0-9.e+-]+)$", text, re.M)
    return float(match.group(1)) if match else 0.0


def scrape(**headers) -> tuple[int, str]:
    response = Client(**headers).get("/metrics")
    return response.status_code, response.content.decode()


def test_metrics_are_off_unless_a_token_or_addresses_are_set(settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", []
    assert scrape()[0] == 404


def test_a_token_is_required_and_checked(settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = TOKEN, []
    assert scrape()[0] == 403
    assert scrape(HTTP_AUTHORIZATION="Bearer wrong")[0] == 403
    status, text = scrape(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    assert status == 200
    assert "legalmem_http_requests_total" in text


def test_allowed_addresses_need_no_token(settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = "", ["127.0.0.1"]
    assert scrape()[0] == 200
    settings.METRICS_ALLOWED_IPS = ["10.9.9.9"]
    assert scrape()[0] == 403


def test_a_search_and_the_jobs_show_up_without_naming_anyone(world, settings):
    settings.METRICS_TOKEN, settings.METRICS_ALLOWED_IPS = TOKEN, []
    note = world.note("房东承诺下周五前退还三千元押金。", matter=world.matter_deposit)
    talk = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    save_message(talk, "user", "押金什么时候退？", speaker="alice")
    index_messages()
    _, before = scrape(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    response = client_for(world.alice).post("/api/memory/search", {"query": "押金什么时候退", "k": 5}, format="json")
    assert response.status_code == 200
    _, after = scrape(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")
    series = 'legalmem_search_seconds_count{strategy="layered"}'
    assert value(after, series) == value(before, series) + 1
    assert value(after, 'legalmem_http_requests_total{method="POST",status="2xx"}') >= 1
    assert value(after, 'legalmem_recalled_hits_total{layer="case"}') > value(before, 'legalmem_recalled_hits_total{layer="case"}')
    assert 'legalmem_extraction_jobs{status="pending"}' in after
    assert 'legalmem_routing_decisions{action="add"}' in after
    assert "legalmem_extraction_oldest_unfinished_seconds" in after
    for private in (note.content, world.firm_a.slug, world.alice.username, "押金"):
        assert private not in after


@pytest.mark.django_db(transaction=True)
@pytest.mark.live_server
def test_the_server_counts_across_processes_in_the_multiprocess_directory(fake_llm, tmp_path):
    """As under `make run`: PROMETHEUS_MULTIPROC_DIR set, each process writes its own files and a
    scrape adds them up."""
    directory = tmp_path / "prometheus"
    directory.mkdir()
    env = {"PROMETHEUS_MULTIPROC_DIR": str(directory), "METRICS_TOKEN": TOKEN}
    with running_server(fake_llm, env, tmp_path / "daphne.log") as port:
        for _ in range(3):
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=30).close()
        request = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                         headers={"Authorization": f"Bearer {TOKEN}"})
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
    assert value(text, 'legalmem_http_requests_total{method="GET",status="2xx"}') >= 3
    assert any(directory.iterdir())  # the server wrote its figures there


def sample(name: str, **labels: str) -> float:
    from prometheus_client import REGISTRY

    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.mark.django_db(transaction=True)
@pytest.mark.asyncio
async def test_websocket_connections_and_bad_frames_are_counted(world):
    from tests.chat.conftest import open_socket

    before = {
        "refused": sample("legalmem_websocket_connections_total", outcome="unauthenticated"),
        "accepted": sample("legalmem_websocket_connections_total", outcome="accepted"),
        "bad": sample("legalmem_websocket_frames_total", direction="in", type="bad"),
        "unknown": sample("legalmem_websocket_frames_total", direction="in", type="unknown"),
        "errors": sample("legalmem_websocket_frames_total", direction="out", type="error"),
        "open": sample("legalmem_websocket_connections_open"),
    }
    anonymous = await open_socket()
    await anonymous.connect()
    assert (await anonymous.receive_output(timeout=5))["type"] == "websocket.close"
    outsider = await open_socket(world.charlie)
    assert (await outsider.connect())[0]
    assert (await outsider.receive_json_from(timeout=5))["type"] == "ready"
    assert sample("legalmem_websocket_connections_open") == before["open"] + 1
    await outsider.send_to(text_data="{not json")
    await outsider.send_json_to({"type": "shout"})
    for _ in range(2):
        assert (await outsider.receive_json_from(timeout=5))["type"] == "error"
    await outsider.disconnect()
    assert sample("legalmem_websocket_connections_total", outcome="unauthenticated") == before["refused"] + 1
    assert sample("legalmem_websocket_connections_total", outcome="accepted") == before["accepted"] + 1
    assert sample("legalmem_websocket_frames_total", direction="in", type="bad") == before["bad"] + 1
    assert sample("legalmem_websocket_frames_total", direction="in", type="unknown") == before["unknown"] + 1
    assert sample("legalmem_websocket_frames_total", direction="out", type="error") == before["errors"] + 2
    assert sample("legalmem_websocket_connections_open") == before["open"]
