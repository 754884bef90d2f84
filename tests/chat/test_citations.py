"""The check of an answer's markers and sentences (chat/citations.py, chat/support.py), the offline
answer's citations by construction, and the write path's guard against unverified citations."""
from __future__ import annotations

import pytest
from django.utils import translation

from chat.answering import compose_offline_answer
from chat.citations import (
    MARKER_REMOVED, NOT_FOUND, UNVERIFIED_CITATION, ShownMarkers, check_answer, number_sources,
    say_when_nothing_supports,
)
from chat.support import SUPPORT_RULES, supports
from memory.models import Message
from remember.extract import checked_words

SOURCES = number_sources([
    {"kind": "note", "id": "n-rent", "layer": "case", "content": "租金每月5000元，每月5日前支付。",
     "provenance_url": "/memory/notes/n-rent/#source-turn"},
    {"kind": "note", "id": "n-deposit", "layer": "case", "content": "押金3000元，房东周某以墙面污损为由拒绝退还。",
     "provenance_url": "/memory/notes/n-deposit/#source-turn"},
    {"kind": "message", "id": "message:7", "message_id": 7, "conversation_id": 3, "layer": "conversation",
     "content": "合同约定2025年3月1日起租。"},
    {"kind": "document", "id": "document-chunk:9", "layer": "document", "chunk_id": 9,
     "content": "《房屋租赁合同》第 2 页：依据《民法典》第七百二十二条，承租人无正当理由未支付租金的，出租人可以解除合同。",
     "url": "/documents/4/?page=2&start=0"},
])


@pytest.fixture(autouse=True)
def chinese():
    with translation.override("zh-hans"):
        yield


def marks_of(checked) -> list[list[str]]:
    return [s.marks for s in checked.sentences]


def test_sources_are_numbered_in_order_with_their_source():
    assert [s["number"] for s in SOURCES] == [1, 2, 3, 4]
    assert SOURCES[0]["source_url"] == "/memory/notes/n-rent/#source-turn"
    assert SOURCES[2]["source_url"] == "/chat/3/#message-7"  # a recalled turn: its place in its conversation
    assert SOURCES[3]["source_url"] == "/documents/4/?page=2&start=0"  # a passage: the viewer at its page


@pytest.mark.parametrize("answer, saved, marks, cited", [
    # a good marker is kept, normalised to the sentence's end
    ("租金为每月5000元[1]。", "租金为每月5000元。[1]", [[]], [1]),
    ("押金3000元被拒退【2】［3］。", "押金3000元被拒退。[2]（已删除一处无效引用）", [[MARKER_REMOVED]], [2]),
    # a marker to a number outside the list: removed, the sentence marked
    ("租金为每月5000元[9]。", "租金为每月5000元。（引用已删除：所引记忆不支持此句）", [[MARKER_REMOVED]], []),
    # the item states another sum: the marker does not stand
    ("租金为每月6000元[1]。", "租金为每月6000元。（引用已删除：所引记忆不支持此句）", [[MARKER_REMOVED]], []),
    # a fact with no marker at all
    ("房东应在2025年6月30日前退还8000元。", "房东应在2025年6月30日前退还8000元。（记忆中未找到依据）", [[NOT_FOUND]], []),
    # advice states no fact: nothing to mark
    ("建议先与房东协商。", "建议先与房东协商。", [[]], []),
    # a marker in a code block is quoted, never read
    ("```\nrent[1] = 5000\n```", "```\nrent[1] = 5000\n```", [[], [], []], []),
])
def test_markers_and_sentences_are_checked(answer, saved, marks, cited):
    checked = check_answer(answer, SOURCES)
    assert checked.text == saved
    assert marks_of(checked) == marks
    assert checked.cited == cited


def test_a_statute_no_recalled_item_holds_is_marked_unverified():
    answer = ("依据《民法典》第七百二十二条，出租人可以解除合同[4]。"
              "另依据《劳动法》第九十九条，房东须双倍返还押金。")
    checked = check_answer(answer, SOURCES)
    assert checked.unverified_citations == ["《劳动法》第九十九条"]
    assert marks_of(checked) == [[], [UNVERIFIED_CITATION]]
    assert "（未核实的法条引用：《劳动法》第九十九条）" in checked.text
    assert "第七百二十二条，出租人可以解除合同。[4]" in checked.text
    # an article of a law the memory holds, but another article: unverified too
    other = check_answer("依据《民法典》第五百零九条[4]。", SOURCES)
    assert other.unverified_citations == ["《民法典》第五百零九条"]
    # the question's own citation is what the user said, not the model's invention
    asked = check_answer("《劳动合同法》第八十二条规定了二倍工资。", SOURCES, question="《劳动合同法》第八十二条怎么用？")
    assert asked.unverified_citations == []


def test_a_fact_the_question_states_is_not_marked_as_missing_from_memory():
    question = "我2024年3月5日花5999元买的笔记本电脑两周后花屏了，怎么办？"
    restated = "您于2024年3月5日以5999元购买的电脑出现花屏。"
    assert check_answer(restated, SOURCES, question=question).marked == []
    assert marks_of(check_answer(restated, SOURCES, question="电脑花屏了怎么办？")) == [[NOT_FOUND]]


def test_marks_are_in_the_readers_language():
    with translation.override("en"):
        checked = check_answer("The landlord must repay RMB 8,000 by 30 June 2025. Article 99 of the Labour Law applies.",
                               SOURCES)
    assert "(not found in memory)" in checked.text
    assert "(unverified citation: Article 99 of the Labour Law)" in checked.text


def test_thousands_of_markers_keep_a_few_and_the_answer():
    answer = "租金为每月5000元" + "[1]" * 3000 + "[99]" * 2000 + "。"
    checked = check_answer(answer, SOURCES)
    assert checked.text.startswith("租金为每月5000元。[1]")
    assert checked.cited == [1]


def test_the_page_is_sent_only_markers_of_this_answer():
    shown = ShownMarkers(len(SOURCES))
    text = "".join(shown.feed(chunk) for chunk in ["租金5000元[", "1][", "9", "]【", "4】。[", "2"]) + shown.close()
    assert text == "租金5000元[1][4]。[2"


def test_the_support_rules_are_named_and_say_why():
    assert [rule.name for rule in SUPPORT_RULES] == ["conflicting_value", "missing_identifier", "shared_key_value",
                                                     "shared_words"]
    assert supports("押金3000元未退", SOURCES[1]["content"]) == (True, "shared_key_value")
    assert supports("押金4000元未退", SOURCES[1]["content"]) == (False, "conflicting_value")
    assert supports("房东以墙面污损为由拒绝退还", SOURCES[1]["content"]) == (True, "shared_words")
    assert supports("公司股权转让需要董事会决议", SOURCES[1]["content"]) == (False, "none")


@pytest.mark.parametrize("sentence, item, verdict", [
    # written for the rules, not taken from the attribution set
    ("月租是12000元", "房东说月租1.2万，押一付三", (True, "shared_key_value")),  # a bare 万 is a sum
    ("维修费要扣8万元", "对方说要扣10万维修费", (False, "conflicting_value")),
    ("违约金是合同价的10%", "合同约定违约金为合同价的20%", (False, "conflicting_value")),  # rates disagree
    ("仲裁案号是SZ-2026-0419", "仲裁案号SZ-2026-0491，下周开庭", (False, "missing_identifier")),
    ("仲裁案号是SZ-2026-0491", "仲裁案号SZ-2026-0491，下周开庭", (True, "shared_key_value")),
    ("公司2019年成立，注册资本300万", "公司2019年成立，注册资本500万", (False, "conflicting_value")),  # a year is no sum
])
def test_sums_rates_and_identifiers_decide_support(sentence, item, verdict):
    assert supports(sentence, item) == verdict


def test_the_offline_answer_cites_what_it_lists_and_labels_its_advice():
    answer = compose_offline_answer("押金什么时候退？", SOURCES)
    assert "- 押金3000元，房东周某以墙面污损为由拒绝退还。 [2]" in answer
    assert "通用建议（并非来自记忆）" in answer
    checked = check_answer(answer, SOURCES, by_construction=True)
    assert checked.marked == [] and set(checked.cited) == {1, 2, 3, 4}


def test_the_offline_answer_says_memory_holds_nothing_when_nothing_bears_on_the_question():
    answer = compose_offline_answer("公司股权转让需要哪些审批？", SOURCES[:2])
    assert "记忆中没有这方面的记录" in answer
    assert "记忆中有以下相关内容" not in answer
    assert "[1]" in answer  # the weak matches are still listed, under what they are


def test_an_unverified_citation_never_reaches_the_write_path():
    checked = check_answer("押金3000元[2]。依据《劳动法》第九十九条，房东须双倍返还押金。", SOURCES)
    reply = Message(content=checked.text, citations=checked.as_dict(SOURCES))
    words = checked_words(reply)
    assert "劳动法" not in words and "未核实" not in words and "[2]" not in words
    assert "押金3000元。" in words


@pytest.mark.parametrize("question, answer, said", [
    ("公司股权转让需要哪些审批？", "一般需要股东会决议。", True),          # nothing bears on it: said first
    ("公司股权转让需要哪些审批？", "记忆中没有相关记录。一般需要股东会决议。", False),  # the model said it
    ("押金什么时候退？", "一般在退租后退还。", False),                     # an item bears on the question
    ("我的客户叫王磊，股权转让已经完成。", "好的，已记下。", False),          # told, not asked
])
def test_memory_holding_nothing_is_said_at_the_answer(question, answer, said):
    checked = say_when_nothing_supports(check_answer(answer, SOURCES[:2], question=question), SOURCES[:2], question)
    assert checked.text.startswith("【记忆中没有这方面的记录】") is said
    assert checked.text.endswith(answer)


@pytest.mark.django_db
@pytest.mark.parametrize("engine, checked", [("llm:qwen-local", True), ("mcp", False)])
def test_only_answers_this_chat_made_are_checked(world, engine, checked):
    """A reply another assistant hands over through a connector is remembered as given."""
    from chat.turns import Recall, begin_turn, finish_turn
    from memory.models import AuditEvent, AuditLog

    reply = "张三于2024年3月5日付款5999元。"
    start = begin_turn(world.alice, question="付款的情况怎么样？", conversation_id=None, matter_id=None)
    saved = finish_turn(start, Recall(result=None, llm_messages=[]), reply=reply, status="complete",
                        engine=engine, timings={})
    assert (saved.content != reply) is checked
    assert ("（记忆中未找到依据）" in saved.content) is checked
    assert AuditLog.objects.filter(event_type=AuditEvent.ANSWER_CHECKED, object_id=str(saved.pk)).exists() is checked


@pytest.mark.django_db
def test_the_reminder_to_cite_comes_only_with_numbered_items(world):
    from chat.turns import CITATION_REMINDER, begin_turn, recall

    def asked(question: str):
        return recall(world.alice, begin_turn(world.alice, question=question, conversation_id=None,
                                              matter_id=world.matter_deposit.pk))

    none = asked("林晓雯的押金是多少？")  # memory holds nothing yet
    assert none.recalled == [] and all(m["content"] != CITATION_REMINDER for m in none.llm_messages)
    world.note("租客林晓雯的押金为3000元。", matter=world.matter_deposit)
    listed = asked("林晓雯的押金是多少？")
    assert listed.recalled and listed.llm_messages[-2] == {"role": "system", "content": CITATION_REMINDER}
