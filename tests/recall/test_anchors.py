"""A question pinned to a name or identifier nobody visible ever mentioned is answered with nothing."""
from __future__ import annotations

import pytest

from memory.models import Conversation, Message
from memory.services.conversations import save_message
from recall import search_memory
from memory.services.conversations import finish_reply
from recall.anchors import question_anchors


def texts(question: str) -> list[str]:
    return [anchor.text for anchor in question_anchors(question)]


def test_names_identifiers_and_long_numbers_are_anchors():
    assert texts("陈露的押金被房东扣了多少？") == ["陈露"]
    assert texts("赵敏那个同事现在是以什么方式作证？") == ["赵敏"]
    assert texts("撞我那辆苏A·3M58Q投保的是哪家保险公司？") == ["3M58Q"]
    assert texts("房东坚持扣的地砖8,800元，凭据呢？") == ["8,800"]
    assert texts("(2025)浙0106民初1234号案件开庭了吗") == ["(2025)浙0106民初1234号"]


def test_years_short_numbers_formulas_places_and_common_words_are_not():
    assert texts("2025年11月那封警告信站得住吗？") == []
    assert texts("2N你算出来是多少？押金300元呢") == []
    assert texts("上次你建议合同里违约金怎么写？") == []
    # jieba tags these as names or places; they are words a paraphrase may not repeat
    assert texts("后厨修屋顶影响使用那段时间，减租怎么算？") == []
    assert texts("孙丽在健身房一共付了多少钱（年卡加私教）？") == ["孙丽"]
    assert texts("第二趟上门是几号？我跟你说过新店选在哪里吗？") == []
    # an English name may be the memory's Chinese one in pinyin ("Liu Jianguo" for 刘建国)
    assert texts("What did Kevin say about Liu Jianguo's flat?") == []


def test_a_case_number_is_one_anchor_whatever_the_width_of_its_brackets():
    """The recogniser the exact-first order uses (recall.identifiers), so the two agree."""
    (anchor,) = question_anchors("（2025）浙0106民初1234号什么时候开庭？")
    assert anchor.text == "(2025)浙0106民初1234号"
    assert set(anchor.spellings) == {"(2025)浙0106民初1234号", "（2025）浙0106民初1234号"}


def test_an_amount_is_held_however_it_is_grouped():
    (anchor,) = question_anchors("那笔25000元的押金")
    assert set(anchor.spellings) == {"25000", "25,000"}


@pytest.fixture
def yuhang(world):
    """A fact about 王磊 and an ID number, on the deposit matter (alice only; bob is walled)."""
    return world.note("客户王磊在杭州租房，身份证号330102199001011234，押金8,800元。",
                      matter=world.matter_deposit)


@pytest.mark.django_db
def test_the_assigned_lawyer_gets_the_memory_that_holds_the_anchor(world, yuhang):
    result = search_memory(world.alice, "王磊那套房子的押金是多少？", k=5)

    assert result.nothing_on == []
    assert yuhang.pk in [hit.note.pk for hit in result.hits if hit.note is not None]


@pytest.mark.django_db
@pytest.mark.parametrize("question", ["王磊那套房子的押金是多少？", "身份证号330102199001011234是谁的？",
                                      "押金8800元退了吗？"])
def test_behind_the_wall_and_in_another_firm_the_answer_is_nothing(world, yuhang, question):
    for outsider in (world.bob, world.charlie):
        result = search_memory(outsider, question, k=5)

        assert result.hits == []
        assert result.nothing_on


@pytest.mark.django_db
def test_a_part_of_a_longer_word_or_number_is_held(world, yuhang):
    assert search_memory(world.alice, "王磊律师的押金呢？", k=5).nothing_on == []
    assert search_memory(world.alice, "尾号1234的身份证是谁的？", k=5).nothing_on == []
    assert search_memory(world.alice, "那8800元押金呢？", k=5).nothing_on == []


@pytest.mark.django_db
def test_an_excluded_message_does_not_hold_its_anchor(world, laptop_conversation):
    """The chat excludes the message it is answering (a statement ending in a question mark or not)."""
    conversation, _ = laptop_conversation
    said = save_message(conversation, "user", "张伟那批货还压在仓库里", speaker="alice")

    excluded = search_memory(world.alice, "张伟那批货怎么处理", k=5, exclude_message_ids=[said.pk])
    included = search_memory(world.alice, "张伟那批货怎么处理", k=5)

    assert excluded.nothing_on == ["张伟"]
    assert excluded.hits == []
    assert included.nothing_on == []


@pytest.mark.django_db
def test_asking_again_or_reading_the_composed_answer_does_not_make_it_held(world):
    """bob asks about 陈露 twice: his first question and the offline answer that repeated the
    name are not memory about her, so the second ask is answered with nothing too."""
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.bob, matter=None)
    first = save_message(conversation, "user", "陈露的押金被房东扣了多少？", speaker="bob")
    composed = save_message(conversation, "assistant", "记忆中没有任何提到“陈露”的内容。", speaker="assistant")
    finish_reply(composed, recalled=[], timings={}, engine=Message.OFFLINE_ENGINE)

    again = search_memory(world.bob, "陈露的押金后来退了吗？", k=5)

    assert first.pk
    assert again.nothing_on == ["陈露"]


@pytest.mark.django_db
def test_a_statement_that_ends_as_a_question_elsewhere_still_holds(world):
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.bob, matter=None)
    save_message(conversation, "user", "陈露是我的房东，押金扣了3000元。", speaker="bob")

    assert search_memory(world.bob, "陈露的押金后来退了吗？", k=5).nothing_on == []


@pytest.mark.django_db
def test_an_amount_is_not_held_by_its_digits_said_apart(world):
    """"8,800" is not held by a message that says "8月" and "800元"."""
    conversation = Conversation.objects.create(firm=world.firm_a, user=world.bob, matter=None)
    save_message(conversation, "user", "8月交了800元物业费。", speaker="bob")

    assert search_memory(world.bob, "房东扣的8,800元凭什么？", k=5).nothing_on == ["8,800"]
