"""Raw messages at scale: the per-conversation term counts stay exactly what the messages say
(chat, status changes, import, forgetting, erasure), and the index-driven read used above
``EXACT_MESSAGE_MAX_ROWS`` returns the same candidates as the exact pass — under the same
visibility rule (bob walled off, charlie of another firm sees nothing)."""
from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from infra.embeddings import get_embedder
from memory.models import Conversation, ConversationTerm, Message
from memory.services.conversations import save_message
from remember.message_index import index_messages
from recall import messages as message_reads
from recall.keywords import query_tokens
from recall import message_scale
from recall.message_scale import keyword_best
from recall.messages import message_candidates
from recall.plan import make_plan
from records.erasure import conversation_unit, erase
from tests.remember.factories import at

pytestmark = pytest.mark.django_db

LINES = [
    "房东说押金要扣一半，因为墙面有污损。",
    "押金条在委托人手里，房东不认账。",
    "The landlord kept the deposit and blamed the tenant for the wall damage.",
    "Our client paid the deposit by bank transfer on 3 March.",
    "房东同意退还押金，但要先检查房屋。",
    "The tenant took photos of the walls when moving out.",
    "中介说押金已经转给房东了。",
    "Please send the deposit receipt and the bank statement.",
    "房东的电话换了，联系不上。",
    "The deposit receipt is signed by the landlord's agent.",
    "法院立案需要押金条和转账记录。",
    "The court asked for the bank statement of March.",
]
QUERIES = [
    "房东押金", "deposit receipt landlord", "bank statement March", "押金条 转账记录 法院", "wall damage photos",
    "中介 房东 电话", "deposit", "landlord agent signed receipt",
]


def recounted() -> dict[tuple[int, str], int]:
    """The counts computed from the messages themselves (what the triggers must keep)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.conversation_id, t.lexeme, count(*) FROM memory_message m, "
            "unnest(array_append(tsvector_to_array(m.search_vector), '')) AS t(lexeme) "
            "WHERE m.status = 'complete' GROUP BY 1, 2"
        )
        return {(c, lexeme): n for c, lexeme, n in cursor.fetchall()}


def stored() -> dict[tuple[int, str], int]:
    return {(t.conversation_id, t.lexeme): t.messages for t in ConversationTerm.objects.all()}


@pytest.fixture
def chats(world):
    """alice's conversations on the deposit matter and without a matter, bob's own, all indexed."""
    on_matter = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    private = Conversation.objects.create(firm=world.firm_a, user=world.alice)
    bobs = Conversation.objects.create(firm=world.firm_a, user=world.bob)
    for minute, text in enumerate(LINES):
        conversation = on_matter if minute % 3 == 0 else private
        save_message(conversation, "user" if minute % 2 == 0 else "assistant", text, speaker="alice",
                     said_at=at(2, 10, minute))
    save_message(bobs, "user", "bob 的押金问题：房东不退押金。", speaker="bob", said_at=at(2, 11, 0))
    index_messages()
    return on_matter, private, bobs


def test_term_counts_follow_every_change_of_the_messages(world, chats):
    on_matter, private, _bobs = chats
    assert stored() == recounted()
    assert stored()[(on_matter.pk, "")] == 4
    reply = save_message(private, "assistant", "押金的一半是一千五百元。", speaker="assistant",
                         status=Message.Status.STREAMING)
    before = stored()
    assert before == recounted()  # a streaming reply does not count yet
    Message.objects.filter(pk=reply.pk).update(status=Message.Status.COMPLETE)
    assert stored() == recounted()
    assert stored()[(private.pk, "")] == before[(private.pk, "")] + 1
    assert set(stored()) > set(before)  # words only the reply holds
    Message.objects.filter(pk=reply.pk).update(status=Message.Status.CANCELLED)
    assert stored() == recounted() == before  # zero counts are removed
    Message.objects.filter(conversation=private).update(search_text="押金 押金")
    assert stored() == recounted()
    Message.objects.filter(pk__in=list(Message.objects.filter(conversation=private).values_list("pk", flat=True)[:2])).delete()
    assert stored() == recounted()


def test_erasing_a_conversation_leaves_no_count_of_it(world, chats):
    on_matter, private, _bobs = chats
    erase(conversation_unit(world.firm_a, private.pk), actor="system:test", reason="request")
    assert stored() == recounted()
    assert not ConversationTerm.objects.filter(conversation_id=private.pk).exists()
    assert ConversationTerm.objects.filter(conversation_id=on_matter.pk, lexeme="").get().messages == 4


def test_a_bulk_insert_is_counted_once_per_message(world, chats):
    _on_matter, private, _bobs = chats
    Message.objects.bulk_create([
        Message(conversation=private, firm=world.firm_a, role="user", speaker="alice", content=f"押金 {i}",
                said_at=at(3, 9, i), search_text=f"押金 第{i}次")
        for i in range(30)
    ])
    assert stored() == recounted()
    assert stored()[(private.pk, "押金")] == recounted()[(private.pk, "押金")] >= 30


def candidates(user, query: str, *, matter_id=None, exclude=()) -> list[tuple]:
    tokens = query_tokens(query)
    vector = get_embedder().embed_query(query)
    found = message_candidates(user, make_plan(query, matter_id=matter_id), vector, tokens, limit=3,
                               exclude_ids=exclude)
    return sorted(
        (c.message.pk, round(c.keyword, 4), tuple(c.matched_words), c.via_vector, c.via_keyword,
         None if c.distance is None else round(c.distance, 5), c.partner.pk if c.partner else None)
        for c in found
    )


def test_the_index_driven_read_returns_what_the_exact_pass_returns(world, chats, settings):
    on_matter, _private, _bobs = chats
    first = Message.objects.filter(conversation=on_matter).order_by("pk").first()
    cases = [(world.alice, q, None, ()) for q in QUERIES]
    cases += [(world.alice, "房东押金", world.matter_deposit.pk, ()), (world.alice, "押金", None, (first.pk,))]
    exact = [candidates(user, q, matter_id=m, exclude=x) for user, q, m, x in cases]
    assert all(exact[:3])
    settings.EXACT_MESSAGE_MAX_ROWS = 0  # every search takes the walk
    walked = [candidates(user, q, matter_id=m, exclude=x) for user, q, m, x in cases]
    assert walked == exact  # the walk reads each turn partner in its own statement: the same ones
    assert any(row[-1] is not None for rows in exact for row in rows)
    bob_ids = {row[0] for row in candidates(world.bob, "房东押金")}
    assert bob_ids
    assert not bob_ids & set(Message.objects.filter(conversation__user=world.alice).values_list("pk", flat=True))
    assert candidates(world.charlie, "房东押金") == []


def test_keyword_best_widens_past_the_rarest_words_until_the_rest_cannot_catch_up(world, chats):
    """Words of very different frequencies and a limit the messages holding every word cannot
    fill: the MaxScore pass must reach the same ids as scoring every message."""
    _on_matter, private, _bobs = chats
    Message.objects.bulk_create([
        Message(conversation=private, firm=world.firm_a, role="user", speaker="alice", content="x",
                said_at=at(4, 9, i % 60), search_text=" ".join(w for j, w in enumerate(["押金", "房东", "中介", "钥匙"])
                                                              if (i >> j) & 1 or j == 0))
        for i in range(40)
    ])
    scope = "m.conversation_id = ANY(%s) AND m.status = %s AND NOT (m.id = ANY(%s))"
    params = [[private.pk], "complete", [0]]
    words = ["钥匙", "中介", "押金", "房东"]
    with connection.cursor() as cursor:
        frequencies = message_reads.read_frequencies(cursor, [private.pk], [0], scope, params, words)
        idf = frequencies.idf()
        for limit in (1, 5, 12, 30, 60):
            got = keyword_best(cursor, scope, params, words, idf, frequencies.per_word, limit=limit)
            cursor.execute(
                "SELECT m.id, m.search_vector, m.said_at FROM memory_message m WHERE m.conversation_id = %s "
                "AND m.status = 'complete'", [private.pk],
            )
            rows = cursor.fetchall()
            scored = []
            for pk, vector, said_at in rows:
                held = set(vector.replace("'", " ").split()) if vector else set()
                total = round(sum(w for word, w in zip(words, idf) if word in held), 9)
                if total > 0:
                    scored.append((-total, -said_at.timestamp(), -pk))
            expected = [-key[2] for key in sorted(scored)[:limit]]
            assert got == expected, limit


def test_every_word_read_in_the_latest_window_is_the_read_over_all_messages(world, chats):
    """The every-word read first keeps to a window of the latest messages (``recent_window``):
    with a dormant conversation, messages said at the same instant (ties broken by id) and a
    window too small to fill the limit (the read runs again over all), it returns exactly what
    the read over all messages returns — and with a window that holds the limit, it answers
    from the window alone (one statement)."""
    on_matter, private, _bobs = chats
    dormant = Conversation.objects.create(firm=world.firm_a, user=world.alice)
    rows = [Message(conversation=dormant, firm=world.firm_a, role="user", speaker="alice", content="x",
                    said_at=at(1, 8, i), search_text="押金 房东") for i in range(30)]
    for i in range(120):  # the active ones: interleaved, every third pair said at the same instant
        rows.append(Message(conversation=(on_matter, private)[i % 2], firm=world.firm_a, role="user",
                            speaker="alice", content="x", said_at=at(5, 9, i // 3),
                            search_text="押金 房东 中介" if i % 4 else "押金 钥匙"))
    Message.objects.bulk_create(rows)
    conversations = [on_matter.pk, private.pk, dormant.pk]
    scope = "m.conversation_id = ANY(%s) AND m.status = %s AND NOT (m.id = ANY(%s))"
    words = ["押金", "房东"]
    with connection.cursor() as cursor:
        for limit in (1, 5, 20, 60, 200):
            params = [conversations, "complete", [rows[-1].pk]]
            expected = message_scale._holding_every_word(cursor, scope, params, words, limit=limit)
            assert len(expected) == min(limit, 30 + 90 - 1 + 4)  # and 4 lines of the chats
            for size, per_conversation in ((8, 4), (40, 20), (60, 30), (400, 200)):
                statements: list[str] = []

                def count(execute, sql, sql_params, many, context):
                    statements.append(sql)
                    return execute(sql, sql_params, many, context)

                with connection.execute_wrapper(count):
                    got = message_scale._holding_every_word(
                        cursor, scope, params, words, limit=limit, recent=(conversations, size, per_conversation)
                    )
                assert got == expected, (limit, size)
                if limit == 5 and size == 40:  # 40 latest hold 5 with both words: no second read
                    assert len(statements) == 1
                    assert statements[0].startswith("WITH bounds")
                if limit == 200:  # the window can never hold 200: the read over all ran too
                    assert len(statements) == 2


def test_recent_window_is_sized_by_the_word_frequencies():
    assert message_scale.recent_window(100_000, [10_000, 5_000], 10, limit=40) == (16_000, 3_200)
    assert message_scale.recent_window(100_000, [60_000], 10, limit=40) == (134, 27)  # a common word: few latest
    assert message_scale.recent_window(100_000, [300, 200], 10, limit=40) is None  # rare: the window would be all
    assert message_scale.recent_window(0, [1], 10, limit=40) is None
    assert message_scale.recent_window(100_000, [], 10, limit=40) is None


def brute_force_best(conversation_ids, excluded, words, idf, limit) -> list[int]:
    """The keyword best computed in Python from every message: the answer every read must give."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT m.id, m.search_vector, m.said_at FROM memory_message m WHERE m.conversation_id = ANY(%s) "
            "AND m.status = 'complete' AND NOT (m.id = ANY(%s))", [conversation_ids, excluded],
        )
        rows = cursor.fetchall()
    scored = []
    for pk, vector, said_at in rows:
        held = set(vector.replace("'", " ").split()) if vector else set()
        weighted = sorted(((w, word) for word, w in zip(words, idf) if w > 0), key=lambda item: -item[0])
        total = round(sum(w for w, word in weighted if word in held), 9)
        if total > 0:
            scored.append((-total, -said_at.timestamp(), -pk))
    return [-key[2] for key in sorted(scored)[:limit]]


@pytest.fixture
def many_lines(world, chats):
    """Three of alice's conversations (one dormant) holding common words in every combination —
    words that go together more often than their frequencies tell, lines said at one instant."""
    on_matter, private, _bobs = chats
    dormant = Conversation.objects.create(firm=world.firm_a, user=world.alice)
    vocabulary = ["押金", "房东", "中介", "钥匙", "合同"]
    rows = [Message(conversation=dormant, firm=world.firm_a, role="user", speaker="alice", content="x",
                    said_at=at(1, 8, i % 60), search_text="押金 房东 中介 钥匙") for i in range(40)]
    for i in range(600):
        held = [word for j, word in enumerate(vocabulary) if (i * 7 + j * 3) % (j + 2) == 0] or ["租金"]
        if i % 5 == 0:
            held = vocabulary[:3]  # a frequent combination
        rows.append(Message(conversation=(on_matter, private)[i % 2], firm=world.firm_a, role="user",
                            speaker="alice", content="x", said_at=at(6, 9, (i // 4) % 60),
                            search_text=" ".join(held + [f"第{i}句"])))
    Message.objects.bulk_create(rows)
    return [on_matter.pk, private.pk, dormant.pk], rows


def test_keyword_best_by_score_levels_is_the_exact_best(world, many_lines):
    """Common words (the score-level read: the latest messages in index order, the rarer levels
    above through the GIN index, more of the latest when those are common) give exactly what
    scoring every message gives — for every word set, limit, excluded message and window size."""
    conversations, rows = many_lines
    scope = "m.conversation_id = ANY(%s) AND m.status = %s AND NOT (m.id = ANY(%s))"
    answered_by_levels = 0
    for words in (["押金", "房东"], ["押金", "中介", "钥匙"], ["钥匙", "合同"], ["押金", "房东", "中介", "钥匙", "合同"],
                  ["合同", "租金"]):
        for excluded in ([0], [rows[-1].pk, rows[-5].pk]):
            params = [conversations, "complete", excluded]
            with connection.cursor() as cursor:
                counted = message_reads.read_frequencies(cursor, conversations, excluded, scope, params, words)
                idf = counted.idf()
                weighted = sorted(((w, df, word) for word, w, df in zip(words, idf, counted.per_word) if w > 0),
                                  key=lambda item: -item[0])
                for limit in (1, 5, 20, 60):
                    for latest_max in (40, 4000):
                        bounds = message_scale.LevelBounds(min_postings=0, latest_min_rows=10,
                                                           latest_max_rows=latest_max)
                        expected = brute_force_best(conversations, excluded, words, idf, limit)
                        by_levels = message_scale.best_by_levels(
                            cursor, scope, params, weighted, limit=limit, total=counted.total,
                            conversation_ids=conversations, bounds=bounds)
                        if by_levels is not None:
                            answered_by_levels += 1
                            assert by_levels == expected, (words, limit, excluded, latest_max)
                        assert keyword_best(cursor, scope, params, words, idf, counted.per_word, limit=limit,
                                            total=counted.total, conversation_ids=conversations,
                                            bounds=bounds) == expected
    assert answered_by_levels >= 40  # the score-level read answered most of them itself


def test_score_levels_and_the_groups_above_a_level():
    weights = [3.0, 2.0, 1.0]
    assert message_scale.score_levels(weights) == [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]  # 3.0 twice: one level
    assert message_scale.groups_above(weights, 3.0) == [[0, 1], [0, 2]]  # 5 and 4 (and 6: holds both)
    assert message_scale.groups_above(weights, 2.5) == [[0], [1, 2]]
    assert message_scale.groups_above(weights, 6.0) == []
    assert message_scale.latest_size(100_000, [10_000, 10_000], limit=20) == 400  # at least LATEST_MIN_ROWS
    assert message_scale.latest_size(100_000, [500], limit=20) is None  # rare: more than LATEST_MAX_ROWS
    assert message_scale.latest_size(600, [300], limit=20) is None  # half of all messages
