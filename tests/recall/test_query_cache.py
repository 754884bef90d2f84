"""Remembered query vectors (``SEARCH_QUERY_CACHE_SIZE``, infra/embeddings): the same search
text asked again is not encoded again — counted as requests to a real (fake) embeddings server
— while every search still applies its own access rule (alice, bob walled off, charlie of
another firm); a failed encode is not remembered; the memory is bounded."""
from __future__ import annotations

import pytest
from django.test import override_settings

from infra import embeddings
from infra.embeddings import EmbeddingUnavailable
from recall import search_memory

pytestmark = pytest.mark.django_db


@pytest.fixture
def server_embeddings(fake_llm):
    """Every vector from the fake OpenAI-compatible server (384-d, like the note column)."""
    fake_llm.embedding_dim = 384
    embeddings._embedder = None  # the process-wide client of an earlier test's server
    with override_settings(EMBEDDING_BACKEND="openai", EMBEDDING_MODEL="hash-384", EMBEDDING_DIMENSIONS=384,
                           EMBEDDING_BASE_URL=fake_llm.base_url, EMBEDDING_API_KEY="k"):
        yield fake_llm
    embeddings._embedder = None


def query_requests(fake) -> list[str]:
    return [text for r in fake.embedding_requests() if r.body.get("input_type") == "query"
            for text in (r.body["input"] if isinstance(r.body["input"], list) else [r.body["input"]])]


def note_ids(result) -> list:
    return [hit.note.pk for hit in result.hits if hit.note is not None]


def test_the_same_question_is_encoded_once(world, server_embeddings):
    deposit = world.note("房东承诺下周五前退还三千元押金。", matter=world.matter_deposit)
    first = search_memory(world.alice, "房东什么时候退押金", k=5)
    second = search_memory(world.alice, "房东什么时候退押金", k=5)
    assert query_requests(server_embeddings) == ["房东什么时候退押金"]
    assert second.timings["embed"] == 0.0
    assert first.timings["embed"] > 0.0
    assert note_ids(second) == note_ids(first)
    assert deposit.pk in note_ids(second)
    search_memory(world.alice, "押金条在哪里", k=5)  # another text: encoded
    assert len(query_requests(server_embeddings)) == 2


def test_a_remembered_vector_still_sees_only_what_each_user_may_see(world, server_embeddings):
    deposit = world.note("房东承诺下周五前退还三千元押金。", matter=world.matter_deposit)
    assert deposit.pk in note_ids(search_memory(world.alice, "房东什么时候退押金", k=5))
    assert deposit.pk not in note_ids(search_memory(world.bob, "房东什么时候退押金", k=50))  # walled off
    assert note_ids(search_memory(world.charlie, "房东什么时候退押金", k=50)) == []  # another firm: nothing
    assert len(query_requests(server_embeddings)) == 1


def test_a_failed_encode_is_not_remembered(world, server_embeddings):
    server_embeddings.script_error(500, times=3, endpoint="embeddings")  # the client's retries too
    with pytest.raises(EmbeddingUnavailable):
        search_memory(world.alice, "房东什么时候退押金", k=5)
    search_memory(world.alice, "房东什么时候退押金", k=5)
    search_memory(world.alice, "房东什么时候退押金", k=5)
    assert query_requests(server_embeddings).count("房东什么时候退押金") == 4  # 3 failed, 1 encoded


def test_the_memory_is_bounded_and_can_be_turned_off(world, server_embeddings, settings):
    settings.SEARCH_QUERY_CACHE_SIZE = 2
    for text in ("押金", "租约", "押金", "钥匙", "租约"):  # 租约 was pushed out by 钥匙
        search_memory(world.alice, text, k=3)
    assert query_requests(server_embeddings) == ["押金", "租约", "钥匙", "租约"]
    settings.SEARCH_QUERY_CACHE_SIZE = 0
    search_memory(world.alice, "押金", k=3)
    search_memory(world.alice, "押金", k=3)
    assert query_requests(server_embeddings)[-2:] == ["押金", "押金"]
