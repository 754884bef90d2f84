"""A query word every nearby line holds (the client's name) names the topic, not the answer: it
weighs less, so "hub" lines restating the client's situation do not push the line that answers
out of the top k (docs/evaluation.md, "Topic words"). Also: a note and its own source turn take
ONE slot with the better of their ranks, and history questions reach an earlier value as similar
as the least similar true correction of the routing set."""
from __future__ import annotations

import numpy as np
import pytest

from memory.models import Conversation, Message
from remember.message_index import index_messages
from recall import search_memory
from recall.fusion import (
    DENSE, KEYWORD, NOTES, Entry, dense_ranking, fuse, keyword_ranking, lift_earlier_statements,
)
from recall.messages import MessageCandidate, score_bm25, word_idf
from recall.scoring import score_message
from recall.topic import query_word_weights, rescore_keywords, topic_discount
from recall.types import MESSAGE, NOTE
from tests.recall.test_fusion_fidelity import entry, statement
from tests.remember.factories import at
from tests.recall.test_turn_memory import said

pytestmark = pytest.mark.django_db

# Lines that each restate the client's situation and name him (the hubs) ...
HUBS = [
    "陈志强九月底晚上骑电动车，在路口被出租车撞了，这是新接的交通事故案子。",
    "陈志强是外卖骑手，一个月大概挣九千元，现在没法干活了。",
    "陈志强十月初做了钢板内固定手术，医药费一共六万多元。",
    "陈志强的伤残鉴定结果出来了，是九级伤残。",
    "陈志强的律师费按最终赔偿额的百分之八收取。",
    "陈志强说出租车公司至今没有联系过他。",
    "陈志强的电动车是刚买的，花了四千二百元，已经撞坏了。",
    "陈志强的事故认定书出来了，出租车司机负全部责任。",
    "陈志强想尽快拿到赔偿，不想拖太久。",
    "陈志强的保险公司第一次报价二十八万元。",
    "陈志强下个月还要去复查一次。",
    "陈志强的平台收入流水显示平均每月九千三百元。",
]
# ... the one line that answers, which does not name him ...
ANSWER = "住院那十天是他妻子在医院陪护的。"
# ... and the rest of alice's history: other clients' hospital stays (住院 is common) and chores.
ELSEWHERE = [
    "赵敏去年因为加班太累住院了一周。",
    "孙丽的母亲住院做了膝盖手术。",
    "住院病历和出院小结都要复印一份留底。",
    "住院伙食补助费可以按每天一百元主张。",
    "刘建国说他父亲住院期间的费用是他垫付的。",
    "护理费一般按住院天数和护理人员的收入计算。",
    "住院期间的误工费要有医院证明。",
    "王律师上周住院做了个小手术，下周回来上班。",
    "明天上午十点要去法院立案庭交材料。",
    "这周事务所的打印机又坏了。",
    "赵敏的加班费仲裁下个月开庭。",
    "刘建国的离婚案，对方要求分割那套房子。",
    "健身房关门了，孙丽想退剩下的会费。",
    "下午三点和客户视频会议，讨论合同修改。",
    "新来的助理叫周婷，以后整理材料的活交给她。",
    "年底前要把所有案卷归档。",
]
QUESTION = "陈志强住院期间谁照顾他？"


@pytest.fixture
def client_history(world):
    """alice's conversation on a matter bob is walled off from: the hubs, the answer and the
    rest, all indexed, and a note restating each hub line."""
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.alice, matter=world.matter_deposit)
    lines = {}
    for minute, text in enumerate([*HUBS, ANSWER, *ELSEWHERE]):
        lines[text] = said(conversation, text, minute=minute)
    index_messages()
    for text in [*HUBS, ANSWER]:  # the offline engine's notes restating each line about the client
        world.note(text, matter=world.matter_deposit, conversation=conversation, source_message_ids=[lines[text].pk])
    return lines


def _candidate(pk: int, words: list[str], idf: list[float], distance: float | None) -> MessageCandidate:
    text = " ".join([*words, "其他", "内容"])
    message = Message(pk=pk, search_text=text, content=text, role="user", said_at=at(2, 10, pk))
    return MessageCandidate(message=message, distance=distance, matched_words=words, matched_idf=idf,
                            via_vector=distance is not None, via_keyword=bool(words))


def test_a_word_every_nearest_line_holds_keeps_little_of_its_weight():
    said_ = [_candidate(1, ["陈志强"], [2.0], 0.1), _candidate(2, ["陈志强"], [2.0], 0.1),
             _candidate(3, ["陈志强", "住院"], [2.0, 1.5], 0.1),
             _candidate(4, ["住院"], [1.5], None)]  # a keyword-only candidate is not a neighbour
    assert topic_discount(["陈志强", "住院", "照顾"], said_) == {"陈志强": 1 - 3 / 4, "住院": 1 - 1 / 4, "照顾": 1.0}
    weights = query_word_weights({"陈志强", "住院", "照顾"}, said_)
    assert weights["陈志强"] < weights["住院"]  # rarer over the whole history, but the topic here
    assert said_[3].keyword > said_[0].keyword
    assert said_[3].bm25 > said_[0].bm25
    assert topic_discount(["陈志强"], [_candidate(5, ["陈志强"], [2.0], None)]) == {}


def _ranked(said_: list[MessageCandidate], weights_of) -> list[int]:
    """The layered search's fusion over raw messages only, with ``weights_of`` weighing the words."""
    weights_of({"陈志强", "住院", "照顾"}, said_)
    messages = [Entry((MESSAGE, c.message.pk), score_message(c.message, distance=c.distance, keyword=c.keyword,
                                                            layer_weight=1.0), "conversation")
                for c in said_]
    slots = fuse([], messages, dense_ranking(said_), keyword_ranking(said_), {})
    return [slot.key[1] for slot in slots]


def test_hub_lines_naming_the_client_do_not_push_the_answer_out_of_the_top_k():
    """Six lines restating the client's situation (nearest by meaning, each naming him: a name rare
    over the whole history, IDF 2.0) and the line that answers (住院, IDF 1.5, no name)."""
    def history() -> list[MessageCandidate]:  # as message_candidates returns them: IDF-only scores
        hubs = [_candidate(pk, ["陈志强"], [2.0], 0.10 + pk / 100) for pk in range(1, 7)]
        found = [*hubs, _candidate(7, ["住院"], [1.5], 0.17), _candidate(8, [], [], 0.30)]
        score_bm25(found)
        rescore_keywords(found, {"陈志强", "住院", "照顾"}, {"陈志强": 2.0, "住院": 1.5, "照顾": 2.0})
        return found

    def without_discount(words, said_):  # the weights before this rule: IDF only
        return word_idf(words, said_)

    assert _ranked(history(), without_discount).index(7) >= 3  # the failure this rule fixes
    assert _ranked(history(), query_word_weights).index(7) < 3


def test_a_search_over_hub_lines_reads_alices_history_only(world, client_history):
    result = search_memory(world.alice, QUESTION, k=10)
    mine = {message.pk for message in client_history.values()}
    assert result.hits
    assert all(set(hit.source_message_ids) <= mine for hit in result.hits)


@pytest.mark.parametrize("who", ["bob", "charlie"])
def test_others_never_get_alices_client_lines(world, client_history, who):
    result = search_memory(getattr(world, who), QUESTION, k=10)
    mine = {message.pk for message in client_history.values()}
    assert not mine & {i for hit in result.hits for i in hit.source_message_ids}
    assert not any(hit.note and hit.note.source_message_ids and set(hit.note.source_message_ids) & mine
                   for hit in result.hits)


def test_a_note_holds_the_message_it_cites_and_the_reply_keeps_the_turn():
    """The note cites the question: it takes the question's ranks; the reply, which it does not
    cite, is the turn's slot with its own (first) dense rank — never credited to the note."""
    note = entry((NOTE, "n1"), 0.50, sources=(1,))  # 3rd by layered score
    question, reply = entry((MESSAGE, 1), 0.30), entry((MESSAGE, 2), 0.20)
    others = [entry((MESSAGE, pk), 0.55 - pk / 100) for pk in (3, 4)]
    slots = fuse([note], [question, reply, *others], dense_rank={2: 1, 1: 4, 3: 2, 4: 3},
                 keyword_rank={1: 1, 3: 2}, superseded_by={}, turns={1: (1, 2), 2: (1, 2)})
    by_key = {slot.key: slot for slot in slots}
    assert by_key[(NOTE, "n1")].ranks == {NOTES: 3, DENSE: 4, KEYWORD: 1}  # the question's ranks
    assert by_key[(MESSAGE, 2)].source_message_ids == (1, 2)
    assert by_key[(MESSAGE, 2)].ranks[DENSE] == 1
    assert (MESSAGE, 1) not in by_key


def test_an_earlier_value_as_similar_as_the_least_similar_routing_correction_is_lifted():
    """Cosine 0.88 between the later and the earlier statement: under the old 0.90 bar it stayed
    where it was (the English routing set has true corrections at 0.877 and 0.881)."""
    slots = [entry((MESSAGE, pk), 0.0) for pk in range(1, 6)]
    for fused, slot in zip((0.05, 0.04, 0.03, 0.02, 0.01), slots):
        slot.fused = fused
    later = np.array([1.0, 0.0, 0.0])
    earlier = np.array([0.88, np.sqrt(1 - 0.88 ** 2), 0.0])
    statements = {1: statement(list(later), day=20), 5: statement(list(earlier), day=2)}
    ordered = lift_earlier_statements(slots, statements)
    assert [slot.key[1] for slot in ordered][:2] == [1, 5]
