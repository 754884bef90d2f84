"""Document passages in every memory search: ``search_memory`` adds them whatever the strategy,
the REST API (``POST /api/memory/search``) and the MCP tool return them with their citation,
document, page, offsets and viewer link — behind the ethical wall (bob gets no passage of the
matter he is not assigned to, charlie of the other firm none) and narrowed by a token's matters."""
from __future__ import annotations

import httpx
import pytest
from django.db import connection

from documents.models import DocumentPage
from recall import MAX_K, registered_strategies, search_memory
from recall.alongside import can_run_alongside
from recall.reach import reach_of
from tests.clients import client_for
from tests.connectors.conftest import make_token, mcp_calls
from tests.connectors.test_mcp_tools import error_text, payload
from tests.documents.conftest import add_document
from tests.documents.files import docx_bytes, text_pdf
from tests.documents.test_extraction import LEASE
from tests.site.conftest import live_daphne, live_daphne_env  # noqa: F401 — the real Daphne server

pytestmark = pytest.mark.django_db

URL = "/api/memory/search"
RENT = "What is the monthly rent and when is it payable?"
CITATION = "《房屋租赁合同》第 2 页"


@pytest.fixture
def lease(world):
    """The lease of the deposit matter (alice's; bob is walled off from it), uploaded by alice."""
    return add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice)


def search(user, **body):
    return client_for(user).post(URL, {"query": RENT, "k": 10, **body}, format="json")


def test_alice_s_search_returns_the_lease_passage_with_its_citation(world, lease):
    for body in ({"matter": world.matter_deposit.pk}, {}):  # her matter, and every matter she may see
        response = search(world.alice, **body)
        assert response.status_code == 200, response.content
        passages = response.json()["passages"]
        top = passages[0]
        assert top["citation"] == CITATION and "RMB 8000" in top["text"]
        assert (top["document_id"], top["matter_id"], top["page"], top["title"]) == \
            (lease.pk, world.matter_deposit.pk, 2, "房屋租赁合同")
        page = DocumentPage.objects.get(document=lease, number=2)
        assert page.text[top["start"]:top["end"]] == top["text"]
        assert top["url"] == f"/documents/{lease.pk}/?page=2&start={top['start']}&end={top['end']}"
        assert top["reasons"] and top["score"] > 0
        assert all(p["document_id"] == lease.pk for p in passages)
        # the context an assistant injects carries the passage under its citation
        assert f"【{CITATION}】" in response.json()["system_message"]


def test_the_passages_are_not_hits(world, lease):
    body = search(world.alice, matter=world.matter_deposit.pk).json()
    assert body["passages"] and all(hit["kind"] in ("note", "message") for hit in body["hits"])


def test_bob_and_charlie_get_no_passage_of_the_walled_matter(world, lease):
    bob = search(world.bob)  # every matter bob may see: the laptop matter only
    assert bob.status_code == 200 and bob.json()["passages"] == []
    assert CITATION not in (bob.json()["system_message"] or "")
    assert search(world.bob, matter=world.matter_deposit.pk).status_code == 404
    assert search(world.bob, matter=world.matter_laptop.pk).json()["passages"] == []

    charlie = search(world.charlie)  # the other firm
    assert charlie.status_code == 200 and charlie.json()["passages"] == []
    assert search(world.charlie, matter=world.matter_deposit.pk).status_code == 404
    assert search(world.charlie, matter=world.matter_b.pk).json()["passages"] == []


def test_another_matter_of_alice_holds_no_passage_of_the_lease(world, lease):
    assert search(world.alice, matter=world.matter_laptop.pk).json()["passages"] == []


def _passages_and_statements_here(user, settings, *, parallel: bool) -> tuple[list[tuple[int, str]], int]:
    """The passages of one search, and how many document statements ran on this thread's connection."""
    settings.SEARCH_PARALLEL_READS = parallel
    here = []

    def count(execute, sql, params, many, context):
        if "documents_documentchunk" in sql and not sql.startswith("SELECT ARRAY("):  # not reach_of's probe
            here.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(count):
        result = search_memory(user, RENT, k=10)
    return [(p.chunk_id, p.citation) for p in result.passages], len(here)


@pytest.mark.django_db(transaction=True)
def test_outside_a_transaction_the_passages_are_read_beside_the_strategy_with_the_same_answer(world, lease, settings):
    """Committed rows: the document statements leave the request's connection (they run while the
    strategy reads), and alice's, bob's and charlie's passages are those of one connection."""
    assert can_run_alongside()
    for user in (world.alice, world.bob, world.charlie):
        alongside, here = _passages_and_statements_here(user, settings, parallel=True)
        assert here == 0, "a document statement ran on the request's connection"
        single, here = _passages_and_statements_here(user, settings, parallel=False)
        assert alongside == single, user.username
        if user == world.alice:
            assert here >= 1 and alongside[0][1] == CITATION
        else:
            assert alongside == []


def test_the_reach_names_the_matters_holding_a_passage_behind_the_same_walls(world, lease):
    assert reach_of(world.alice).document_matter_ids == (world.matter_deposit.pk,)
    assert reach_of(world.bob).document_matter_ids == ()  # walled off from the deposit matter
    assert reach_of(world.charlie).document_matter_ids == ()  # the other firm


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("parallel", [True, False])
def test_a_search_of_matters_without_passages_reads_no_document(world, lease, settings, monkeypatch, parallel):
    """A search pays nothing for documents where the matters searched hold none (alice's laptop
    matter, bob's and charlie's reach), with its reads beside the strategy or on one connection;
    alice's search of every matter still reads them."""
    from documents import search as documents

    settings.SEARCH_PARALLEL_READS = parallel
    assert can_run_alongside() == parallel  # committed rows: the worker threads' reads are real
    reads = []
    real = documents.document_rankings
    monkeypatch.setattr(documents, "document_rankings", lambda *a, **kw: reads.append(1) or real(*a, **kw))
    for user, matter in ((world.alice, world.matter_laptop.pk), (world.bob, None), (world.charlie, None)):
        assert search_memory(user, RENT, k=10, matter_id=matter).passages == []
    assert reads == []
    assert search_memory(world.alice, RENT, k=10).passages[0].citation == CITATION
    assert reads == [1]


@pytest.mark.django_db(transaction=True)
def test_a_failing_document_read_beside_the_strategy_reaches_the_caller(world, lease, monkeypatch):
    """An error of the worker's document read is the search's error, not passages silently missing."""
    from documents import search as documents

    def broken(*args, **kwargs):
        raise RuntimeError("document read failed")

    monkeypatch.setattr(documents, "document_rankings", broken)
    with pytest.raises(RuntimeError, match="document read failed"):
        search_memory(world.alice, RENT, k=5)


@pytest.mark.parametrize("strategy", sorted(registered_strategies()))
def test_every_strategy_gets_the_passages(world, lease, strategy):
    result = search_memory(world.alice, RENT, k=8, strategy=strategy, matter_id=world.matter_deposit.pk)
    assert result.passages and result.passages[0].citation == CITATION
    assert result.timings["documents"] >= 0
    assert search_memory(world.charlie, RENT, k=8, strategy=strategy).passages == []


def test_the_passages_are_bounded_by_k_and_follow_the_scopes(world, lease):
    many = add_document(world.matter_deposit, "lease-copy.pdf", text_pdf(LEASE * 4), actor=world.alice)
    assert many.page_count == 8
    assert len(search_memory(world.alice, RENT, k=2).passages) == 2
    assert len(search_memory(world.alice, RENT, k=MAX_K).passages) == 5
    assert search_memory(world.alice, RENT, k=10, scopes=["user_profile"]).passages == []
    assert search_memory(world.alice, RENT, k=10, scopes=["case"]).passages


def test_a_name_no_note_holds_keeps_only_the_passages_naming_it(world, lease):
    """A question pinned to a name no note or message holds returns no hits (``nothing_on``); a
    passage is kept only when it names it: the tenancy note names 周丽华, nobody names 陈露. (Uploaded
    by no user, the document makes no notes: only its passage holds the name.)"""
    add_document(world.matter_deposit, "租客说明.docx",
                 docx_bytes("租客说明", ["租客周丽华的押金为16000元，租期届满后三十日内退还。"]))
    named = search_memory(world.alice, "周丽华的押金是多少？", k=10)
    assert named.nothing_on == ["周丽华"] and named.hits == []
    assert named.passages and all("周丽华" in passage.text for passage in named.passages)

    unknown = search_memory(world.alice, "陈露的押金是多少？", k=10)
    assert unknown.nothing_on == ["陈露"] and unknown.hits == [] and unknown.passages == []


def test_the_mcp_tool_returns_the_passages_behind_the_same_walls(world, lease):
    query = {"query": RENT, "k": 10}
    [alice] = mcp_calls(make_token(world.alice).token, [("search_memory", query)])
    passages = payload(alice)["passages"]
    assert passages[0]["citation"] == "“房屋租赁合同”, page 2"  # the caller's language (en)
    assert (passages[0]["document_id"], passages[0]["page"]) == (lease.pk, 2)
    assert passages[0]["url"].startswith(f"/documents/{lease.pk}/?page=2&start=")

    [zh] = mcp_calls(make_token(world.alice).token, [("search_memory", query)], language="zh-hans")
    assert payload(zh)["passages"][0]["citation"] == CITATION

    laptop_only = make_token(world.alice, matters=[world.matter_laptop]).token  # narrowed by the token
    [narrowed] = mcp_calls(laptop_only, [("search_memory", query)])
    assert payload(narrowed)["passages"] == []

    [bob, bob_walled] = mcp_calls(make_token(world.bob).token, [
        ("search_memory", query), ("search_memory", {**query, "matter": world.matter_deposit.pk})])
    assert payload(bob)["passages"] == [] and "Not found" in error_text(bob_walled)
    [charlie] = mcp_calls(make_token(world.charlie).token, [("search_memory", query)])
    assert payload(charlie)["passages"] == []


@pytest.mark.live_server
def test_the_mcp_tool_over_http_returns_the_passages_with_their_citation(world, lease, live_daphne):
    """A real Daphne and the SDK's Streamable HTTP client: alice's passages equal the web API's;
    bob and charlie get none."""
    from tests.connectors.test_mcp_live import data, over_http

    query = {"query": RENT, "k": 10, "matter": world.matter_deposit.pk}
    alice = make_token(world.alice).secret
    [search] = over_http(live_daphne, alice, [("search_memory", query)])
    by_mcp = data(search)["passages"]
    assert by_mcp[0]["citation"] == CITATION and (by_mcp[0]["document_id"], by_mcp[0]["page"]) == (lease.pk, 2)
    web = httpx.post(f"{live_daphne.url}{URL}", json=query, timeout=30, headers={"Authorization": f"Bearer {alice}"})
    assert web.status_code == 200
    assert [(p["chunk_id"], p["citation"], p["url"]) for p in by_mcp] == \
        [(p["chunk_id"], p["citation"], p["url"]) for p in web.json()["passages"]]

    every = {"query": RENT, "k": 10}
    for user in (world.bob, world.charlie):
        [theirs, walled] = over_http(live_daphne, make_token(user).secret, [("search_memory", every),
                                                                             ("search_memory", query)])
        assert data(theirs)["passages"] == [] and walled.isError
