"""The retrieval plan is decided from the question and its context alone (no database)."""
from __future__ import annotations

from memory.models import MemoryScope
from recall import make_plan


def test_default_order_is_case_then_profile_cross_case_law_global():
    plan = make_plan("这个电脑花屏纠纷下一步怎么走？", matter_id=7)
    assert plan.layers == ("case", "user_profile", "cross_case", "general_law", "global")
    assert plan.matter_id == 7
    assert not plan.graph_expansion
    assert not plan.search_messages
    assert not plan.persona_first
    assert plan.layer_weight("case") == 1.0 > plan.layer_weight("user_profile") > plan.layer_weight("global")


def test_questions_about_the_user_go_to_persona_first():
    plan = make_plan("我的偏好是什么？我习惯怎么看材料？")
    assert plan.layers[0] == MemoryScope.USER_PROFILE
    assert plan.persona_first
    assert "我的偏好" in plan.cues["persona"]


def test_explicit_references_search_the_conversation():
    for question in ("你之前说过检测报告要怎么做？", "上次聊的押金问题", "刚才那个方案"):
        assert make_plan(question, conversation_id=3).search_messages, question


def test_time_and_causal_words_switch_on_graph_expansion():
    for question in ("为什么房东扣押金？", "加班费的时间线是怎样的", "先后顺序", "是什么导致的退款失败"):
        assert make_plan(question).graph_expansion, question
    assert not make_plan("电脑花屏的检测报告").graph_expansion


def test_scope_filter_keeps_plan_order():
    plan = make_plan("押金", scopes=["global", "case"])
    assert plan.layers == ("case", "global")
    assert plan.quota("case", 10) == 10
    assert plan.quota("global", 10) == 4


def test_plan_serialises_with_reasons():
    data = make_plan("为什么你之前说过要检测？", matter_id=1).as_dict()
    assert data["layers"][0] == "case"
    assert data["graph_expansion"]
    assert data["search_messages"]
    assert data["reasons"]
    assert data["layer_weights"]["case"] == 1.0


def test_a_question_for_the_first_version_given_reads_history_and_ranks_it_above():
    for question in ("我最早报给你的定金是多少？", "第二期我一开始报的是多少？", "医疗费我第一次报给你的是多少？",
                     "担保人的地址，我头一回给你的是哪个？", "What was the first one I told you?",
                     "What price did Daniel first give for his Trek bike?",
                     "Before I corrected it, what did I originally say my bonus would be?"):
        plan = make_plan(question)
        assert plan.history and plan.first_version, question
        assert plan.cues["history"], question


def test_the_value_before_a_named_change_is_asked_like_the_first_version():
    """"涨租之前", "更正之前记的", "改期前": the value before the change is the answer."""
    for question in ("孙雅琴那套房子，涨租之前月租金是多少？", "押金更正之前记的是多少？", "开庭改期前定的是哪天？",
                     "调价以前的单价是多少？"):
        plan = make_plan(question)
        assert plan.history and plan.first_version, question
    for question in ("改期前三天要通知对方吗？", "调解前要准备什么材料？", "我们前面说的押金是多少？", "提前三天通知可以吗？"):
        assert not make_plan(question).first_version, question


def test_other_history_words_still_rank_the_earlier_statement_below_the_current_one():
    """"之前" / "before" also ask for the current value: the earlier one stays below it."""
    for question in ("之前的押金是多少？", "What was Sofia's old phone number? She used to have another."):
        plan = make_plan(question)
        assert plan.history and not plan.first_version, question
    for question in ("How much did that first transfer come to?", "第一次开庭的时候，仲裁员要我补什么材料？",
                     "押金是多少？"):
        assert not make_plan(question).first_version, question
