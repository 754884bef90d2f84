"""A lawyer's first hour (issue 50), through the real write path with the offline engine: a
typed correction replaces the old amount and ranks first, notes name the client (never "用户"
or "alice说"), the lawyer's own plan is the lawyer's, and charlie sees none of it."""
from __future__ import annotations

import pytest

from memory.models import Note
from recall import search_memory
from remember.extraction.grounding import TurnText
from remember.extraction.offline.corrections import correction_statement
from remember.extraction.subjects import SUBJECT_RULES, named_subjects
from tests.remember.factories import ConversationFactory

REPLY = "好的，我记下了。"


@pytest.fixture
def lease(world):
    return ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_deposit, title="押金")


@pytest.fixture
def first_hour(lease, make_turn):
    for said in ("我的客户林晓雯租了一套房，押金2000元，房东到期不退。",
                 "刚才说错了，押金是3000不是2000。",
                 "她还想主张迟延退还押金的利息。",
                 "我觉得最好先发一封律师函。",
                 "中介叫王磊，电话13912345678。"):
        assert make_turn(lease, said, REPLY).status == "done"
    return {note.content: note for note in Note.objects.all()}


def test_the_typed_correction_replaces_the_deposit_and_keeps_the_old_value_in_history(first_hour):
    current = [text for text, note in first_hour.items() if note.status == Note.Status.ACTIVE and "押金" in text
               and "利息" not in text]
    assert current == ["林晓雯租了一套房，押金3000元，房东到期不退。"]
    old = first_hour["林晓雯租了一套房，押金2000元，房东到期不退。"]
    assert old.status == Note.Status.SUPERSEDED
    assert old.superseded_by.content == current[0]


def test_no_note_calls_anyone_user_or_by_their_login(first_hour):
    for text in first_hour:
        assert "用户" not in text and "alice" not in text, text
    assert any(text.startswith("中介叫王磊") for text in first_hour)
    assert any(text.startswith("林晓雯") and "利息" in text for text in first_hour)  # her wish names her
    assert "律师觉得最好先发一封律师函。" in first_hour  # the lawyer's own plan is not the client's


def test_the_recall_question_shows_the_corrected_deposit_first_and_charlie_nothing(world, first_hour):
    result = search_memory(world.alice, "林晓雯的押金是多少？", k=10)
    deposits = [hit.note.content for hit in result.hits if hit.note is not None and "押金" in hit.note.content
                and "利息" not in hit.note.content]
    assert deposits[0] == "林晓雯租了一套房，押金3000元，房东到期不退。"
    assert "林晓雯租了一套房，押金2000元，房东到期不退。" not in deposits
    said = [(hit.note or hit.message).content for hit in result.hits]
    first = next(text for text in said if "押金" in text and ("2000" in text or "3000" in text))
    assert "3000" in first and "押金2000" not in first  # no raw message the correction replaced above it
    for outsider in (world.bob, world.charlie):
        assert search_memory(outsider, "林晓雯的押金是多少？", k=10).hits == []


def test_the_amount_asked_for_comes_before_the_wish_about_it(world, lease, make_turn):
    """In the browser (6 Dec, bench/live_first_hour.py) "林晓雯的押金是多少？" showed her wish about
    the deposit's interest first and the 3000 note second: a question asking for a value is
    answered first by the memory that states it (recall/asked_value.py). Here the fusion alone
    already puts it first; the rule's own order is pinned below."""
    for said in ("我的客户林晓雯租了周建国的房子，押金是2000元，今年2月底退租了，房东说要扣一半押金。",
                 "刚才说错了，押金是3000不是2000。", "帮她找房的中介叫王磊，是链家的经纪人。",
                 "王磊的手机是139 0571 2846。", "林晓雯还想主张迟延退还押金的利息。", "我打算先给房东发一封律师函。"):
        assert make_turn(lease, said, REPLY).status == "done"
    first = search_memory(world.alice, "林晓雯的押金是多少？", k=10).hits[0]
    assert first.note is not None and "押金是3000元" in first.note.content, first.note or first.message


def test_a_value_question_puts_the_near_top_memory_stating_the_value_first():
    from recall.asked_value import answer_first
    from recall.fusion import Entry
    from recall.scoring import ScoreBreakdown

    def slot(key: str, fused: float) -> Entry:
        return Entry(("note", key), ScoreBreakdown(0.9, 0.5, 0.5, 0.8, 0.0, 1.0, 1.0, fused), "case", fused=fused)

    texts = {("note", "wish"): "林晓雯还想主张迟延退还押金的利息。", ("note", "plan"): "律师打算先给房东发一封律师函。",
             ("note", "deposit"): "林晓雯租了周建国的房子，押金是3000元，今年2月底退租了。",
             ("note", "deducted"): "房东说要扣1500元押金。"}
    ranked = [slot("wish", 0.030), slot("deposit", 0.029), slot("plan", 0.028)]
    assert [s.key[1] for s in answer_first(ranked, texts, "林晓雯的押金是多少？")] == ["deposit", "wish", "plan"]
    assert [s.key[1] for s in answer_first(ranked, texts, "林晓雯想要什么？")] == ["wish", "deposit", "plan"]  # no value asked
    far = [slot("wish", 0.03), slot("plan", 0.029), slot("a", 0.028), slot("deducted", 0.027)]
    assert [s.key[1] for s in answer_first(far, texts, "押金是多少？")] == ["wish", "plan", "a", "deducted"]  # beyond the window


@pytest.mark.parametrize(("question", "text", "states"), [
    ("林晓雯的押金是多少？", "林晓雯租了一套房，押金3000元，房东到期不退。", True),
    ("林晓雯的押金是多少？", "林晓雯还想主张迟延退还押金的利息。", False),
    ("How much was the deposit?", "The deposit was RMB 3,000, paid on 1 March.", True),
    ("How much was the deposit?", "She wants the deposit back with interest.", False),
])
def test_what_states_the_value_asked_for(question, text, states):
    from legaltext.acts import asked_point
    from recall.asked_value import states_value_of

    assert states_value_of(text, asked_point(question)) is states


@pytest.mark.parametrize(("typed", "statement"), [
    ("刚才说错了，押金是3000不是2000。", "更正：押金是3000元，不是2000元。"),
    ("押金应该是3000", None),  # "应该是X" alone is advice, not a correction (the reader's rule)
    ("押金其实是6000，不是5000。", "押金其实是6000元，不是5000元。"),
    ("更正一下，月租是4500，不是4200。", "更正：月租是4500元，不是4200元。"),
    ("今天交了押金3000", None),  # no correction
    ("刚才说错了，是下周二开庭。", None),  # no amount of a money slot: left to the routing's date rules
])
def test_a_typed_correction_as_the_statement_it_makes(typed, statement):
    assert correction_statement(typed) == statement


@pytest.mark.parametrize(("user_msg", "relayed", "note", "named"), [
    ("我的客户林晓雯租了一套房。", "", "用户的客户林晓雯租了一套房。", "林晓雯租了一套房。"),
    ("她还想要利息。", "林晓雯", "用户诉求：还想要利息。", "林晓雯诉求：还想要利息。"),
    ("我觉得最好先发律师函。", "林晓雯", "用户觉得最好先发律师函。", "律师觉得最好先发律师函。"),
    ("我在杭州租了房。", "", "用户在杭州租了房。", "当事人在杭州租了房。"),
    ("中介叫王磊。", "", "alice说：中介叫王磊。", "中介叫王磊。"),
    ("I rented a flat.", "", "alice said they rented a flat.", "They rented a flat."),  # English: the login dropped
])
def test_the_subject_rules_on_their_own(user_msg, relayed, note, named):
    turn = TurnText(user_msg, user_name="alice", relayed_client=relayed)
    assert named_subjects(note, turn) == named


def test_every_subject_rule_is_listed_with_its_why_in_chinese():
    from django.utils import translation

    from memory.rules import load_rules

    listed = load_rules()["wording"]
    assert [rule.name for rule in listed] == [rule.name for rule in SUBJECT_RULES]
    with translation.override("zh-hans"):
        assert all("用户" in str(rule.why) or "律师" in str(rule.why) or "当事人" in str(rule.why)
                   or "客户" in str(rule.why) for rule in listed), [str(rule.why) for rule in listed]


@pytest.mark.parametrize(("question", "point"), [
    ("林晓雯的押金是多少？", "押金"), ("林晓雯的车牌号是多少？", "车牌号"), ("房东李建国的手机号码是多少？", "手机号码"),
    ("How much was the deposit?", "deposit"),
    ("如果按违法解除，我能拿多少钱？", None), ("房东现在打算扣我多少钱？", None),  # no thing's point named
])
def test_the_point_a_value_question_asks_for(question, point):
    from legaltext.acts import asked_point

    assert asked_point(question) == point


def test_a_value_question_is_borne_on_only_by_an_item_naming_its_point():
    """The first hour: "林晓雯的车牌号是多少？" listed the matter's deposit notes under "记忆中有以下相关内容"."""
    from chat.support import bears_on

    assert not bears_on("林晓雯的车牌号是多少？", "林晓雯租了周建国的房子，押金是3000元，今年2月底退租了。")
    assert bears_on("林晓雯的押金是多少？", "林晓雯租了周建国的房子，押金是3000元，今年2月底退租了。")
    assert bears_on("林晓雯的车牌号是多少？", "林晓雯的车牌是浙A12345。")


@pytest.mark.parametrize("text, announces", [
    ("吴佩琳物业费的事有两个更新。", True),    # counts the news, states nothing (dev5)
    ("周雅琴的案子有几处变化。", True),
    ("就按这个思路。", True),                  # a bare assent
    ("她有两个孩子。", False),
    ("韩立军的事有几个变化：一是厂里约谈改到这周五下午3点了。", False),
])
def test_news_counted_or_a_bare_assent_is_no_fact(text, announces):
    from remember.extraction.grounding import only_announces

    assert only_announces(text) is announces
