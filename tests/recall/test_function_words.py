"""The question's function words ("我", "给", "的") in the raw-message read: a plain index weighs
them by their IDF, so the product's floor does too — they add to a message's BM25, but they
choose no message, never change the keyword share, and the walk above the exact bound reads
exactly what the exact pass reads."""
from __future__ import annotations

import pytest

from infra.embeddings import get_embedder
from memory.models import Conversation
from memory.services.conversations import save_message
from recall import messages as message_reads
from recall.keywords import ASKING_WORDS, function_words, query_tokens
from recall.messages import prepare_message_read, read_message_candidates, score_bm25
from recall.plan import make_plan
from remember.message_index import index_messages
from tests.remember.factories import at

QUESTION = "房东退给我的钱是多少？"


def test_function_words_are_the_stop_words_a_statement_holds_too():
    assert function_words(QUESTION) == ["给", "我", "的", "是"]
    assert function_words("你之前说过我应该怎么办？") == ["过", "我"]  # asking and chat words left out
    assert not set(function_words("你之前说过我应该怎么办？")) & ASKING_WORDS
    assert function_words("What did you say about the deposit?") == []  # English: the stemmer's own


@pytest.fixture
def lines(world):
    """alice's chat: two lines on the landlord's money (one says "给我"), one of function words
    only, and filler; bob's own line holding every word."""
    chat = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    texts = ["房东退钱了，一共两千。", "房东退给我的钱是两千。", "我的天，这是给我的吗", "物业费每月三百。",
             "钥匙已经交还。", "合同在抽屉里。"]
    saved = [save_message(chat, "user", text, speaker="alice", said_at=at(2, 10, i)) for i, text in enumerate(texts)]
    bobs = Conversation.objects.create(firm=world.firm_a, user=world.bob)
    save_message(bobs, "user", "房东退给我的钱是三千。", speaker="bob", said_at=at(2, 11, 0))
    index_messages()
    return saved


def read(user, *, functions: bool, limit: int = 2) -> dict[int, message_reads.MessageCandidate]:
    vector = get_embedder().embed_query(QUESTION)
    prepared = prepare_message_read(user, make_plan(QUESTION), query_tokens(QUESTION), limit=limit,
                                    function_words=function_words(QUESTION) if functions else ())
    found = read_message_candidates(prepared, vector, limit=limit)
    score_bm25(found)
    return {c.message.pk: c for c in found}


@pytest.mark.django_db
def test_function_words_add_to_bm25_but_choose_no_message(world, lines):
    plain, with_functions = read(world.alice, functions=False), read(world.alice, functions=True)
    said_to_me, said, only_functions = lines[1].pk, lines[0].pk, lines[2].pk
    # The same messages are read, with the same query words and keyword share.
    assert with_functions.keys() == plain.keys()
    for pk, candidate in with_functions.items():
        assert candidate.matched_words == plain[pk].matched_words
        assert candidate.keyword == plain[pk].keyword
        assert candidate.via_keyword == plain[pk].via_keyword
    # The line that says "给我" now scores above the one that does not; alone, without.
    assert with_functions[said_to_me].function_words == ["给", "我", "的", "是"]
    assert with_functions[said_to_me].bm25 > plain[said_to_me].bm25
    assert with_functions[said].bm25 == plain[said].bm25
    assert with_functions[said_to_me].bm25 > with_functions[said].bm25
    # A line of function words only is never a keyword candidate.
    assert only_functions not in with_functions or not with_functions[only_functions].via_keyword


@pytest.mark.django_db
def test_the_walk_reads_the_function_words_as_the_exact_pass(world, lines, settings):
    exact = {pk: (c.matched_words, c.function_words, c.keyword, c.bm25, c.via_keyword)
             for pk, c in read(world.alice, functions=True, limit=3).items()}
    settings.EXACT_MESSAGE_MAX_ROWS = 0  # every read takes the walk
    walked = {pk: (c.matched_words, c.function_words, c.keyword, c.bm25, c.via_keyword)
              for pk, c in read(world.alice, functions=True, limit=3).items()}
    assert walked == exact
    assert any(function_words for _m, function_words, *_rest in exact.values())


@pytest.mark.django_db
def test_function_words_read_only_what_the_asker_may_see(world, lines):
    bobs = read(world.bob, functions=True)
    assert {c.message.conversation.user_id for c in bobs.values()} == {world.bob.pk}
    assert read(world.charlie, functions=True) == {}
