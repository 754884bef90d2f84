"""``document_rankings``: the keyword and dense rankings of the chunks a user may see, read in
one statement, are exactly those of the plain ORM reading over ``DocumentChunk.visible_to`` —
for alice, bob (walled off from the deposit matter) and charlie (another firm), with the
matters given as literals (a search's ``reach``) or read by the rule's own subquery."""
from __future__ import annotations

import pytest
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db.models import F
from pgvector.django import CosineDistance

from infra.embeddings import get_embedder
from documents.models import DocumentChunk
from memory.models.conversations import SEARCH_CONFIG
from memory.segmentation import segment
from documents.search import DOCUMENT_CANDIDATES, DOCUMENT_QUERY_WORDS, document_rankings
from recall.reach import reach_of
from tests.documents.conftest import add_document
from tests.documents.files import text_pdf
from tests.documents.test_extraction import LEASE

pytestmark = pytest.mark.django_db

QUESTIONS = ["What is the monthly rent and when is it payable?", "押金 退还", "违约金 解除合同", "lease deposit"]


def _orm_rankings(user, query: str, matter_id: int | None) -> tuple[list[int], list[int]]:
    """The reference: each ranking its own ORM query over ``visible_to(user)``."""
    chunks = DocumentChunk.objects.visible_to(user)
    if matter_id is not None:
        chunks = chunks.filter(matter_id=matter_id)
    words = sorted(set(segment(query)), key=len, reverse=True)[:DOCUMENT_QUERY_WORDS]
    combined = None
    for word in words:
        one = SearchQuery(word, config=SEARCH_CONFIG, search_type="plain")
        combined = one if combined is None else combined | one
    keyword = list(chunks.filter(search_vector=combined).annotate(rank=SearchRank(F("search_vector"), combined))
                   .order_by("-rank", "id").values_list("id", flat=True)[:DOCUMENT_CANDIDATES])
    vector = list(map(float, get_embedder().embed_query(query)))
    dense = list(chunks.filter(embedding__isnull=False).annotate(distance=CosineDistance("embedding", vector))
                 .order_by("distance", "id").values_list("id", flat=True)[:DOCUMENT_CANDIDATES])
    return keyword, dense


@pytest.fixture
def documents(world):
    """Two documents in alice's deposit matter (bob is walled off from it), one in the laptop
    matter (alice's and bob's), one in the other firm's matter (charlie's)."""
    return [
        add_document(world.matter_deposit, "房屋租赁合同.pdf", text_pdf(LEASE), actor=world.alice),
        add_document(world.matter_deposit, "补充协议.txt", "押金退还的期限为解除合同后十日。\n\n违约金为一个月租金。".encode(),
                     actor=world.alice),
        add_document(world.matter_laptop, "检测报告.pdf", text_pdf([["The deposit of the laptop repair is 200 yuan."]]),
                     actor=world.alice),
        add_document(world.matter_b, "lease.pdf", text_pdf(LEASE), actor=world.charlie),
    ]


def test_one_statement_ranks_exactly_as_the_orm_for_every_user_and_matter(world, documents):
    seen: dict[str, set[int]] = {}
    for user in (world.alice, world.bob, world.charlie):
        reach = reach_of(user)
        for matter_id in (None, *reach.matter_ids):
            for question in QUESTIONS:
                expected = _orm_rankings(user, question, matter_id)
                assert document_rankings(user, question, matter_id=matter_id) == expected, (user.username, question)
                assert document_rankings(user, question, matter_id=matter_id, matter_ids=reach.matter_ids) == expected
                seen.setdefault(user.username, set()).update(*expected)
    visible = {user.username: set(DocumentChunk.objects.visible_to(user).values_list("pk", flat=True))
               for user in (world.alice, world.bob, world.charlie)}
    for username, chunk_ids in seen.items():
        assert chunk_ids and chunk_ids <= visible[username], username
    assert not seen["bob"] & set(DocumentChunk.objects.filter(matter=world.matter_deposit).values_list("pk", flat=True))
    assert not seen["charlie"] & visible["alice"]


def test_a_matter_outside_the_reach_and_a_user_with_no_matter_get_nothing(world, documents, django_user_model):
    """A matter id the user is not assigned to reads nothing, even through the literal rule."""
    reach = reach_of(world.bob)
    assert document_rankings(world.bob, "押金", matter_id=world.matter_deposit.pk, matter_ids=reach.matter_ids) == ([], [])
    nobody = django_user_model.objects.create_user("dora", password="x")
    assert document_rankings(nobody, "押金", matter_ids=reach_of(nobody).matter_ids) == ([], [])
