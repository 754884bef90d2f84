"""``legaltext.asked``: what a question asks about, as the words a memory must name to answer it
(a table of questions, Chinese and English; a question none of the rules reads is None)."""
from __future__ import annotations

import pytest

from legaltext.asked import ASKED_RULES, asked_terms


@pytest.mark.parametrize("question, terms, rule", [
    ("房东李建国的手机号码是多少？", ("手机",), "value-of-point"),
    ("林晓雯的车牌号是多少？", ("车牌",), "value-of-point"),
    ("how much was the deposit?", ("deposit",), "value-of-point"),
    ("我们当初有没有约定水电费怎么结算？", ("水电", "电费"), "whether-it-exists"),
    ("事故现场有没有行车记录仪视频？", ("行车", "视频"), "whether-it-exists"),
    ("我们结婚前有没有签过财产协议？", ("财产", "协议"), "whether-it-exists"),
    ("陈敏找我谈话的时候我有没有录音？", ("录音",), "whether-it-exists"),
    ("无锡锦程置业的法定代表人是谁？", ("法定", "表人"), "who-or-which"),
    ("我们公司的装修施工资质是几级？", ("装修", "资质"), "who-or-which"),
    ("我的车是什么品牌和型号？", ("品牌",), "what-kind"),
    ("What is 东莞嘉信电子's registered address?", ("registered address",), "english-attribute"),
    ("Who is the legal representative of 广州亮途贸易有限公司?", ("legal representative",), "english-attribute"),
])
def test_what_a_question_asks_a_memory_to_name(question, terms, rule):
    assert asked_terms(question) == (terms, rule)


@pytest.mark.parametrize("question", [
    "我押金当初交了多少，什么时候交的？",  # how much / when: the memory states a sum and a day, not the word
    "房东现在打算扣我多少钱？理由是什么？",
    "合同编号和房屋地址是什么？",
    "结算书的事情现在是什么情况？",  # 情况: a slot, not a thing to name
    "借条是在什么地方签的？",  # answered by "在苏州签的"
    "沙发划痕的事我有证据吗？",
    "有没有证据能证明？",
    "你之前建议我怎么做？",
    "What's the deadline for the invalidation?",
    "What did the QIMA inspection find?",
    "",
])
def test_a_question_about_nothing_in_particular_asks_no_word(question):
    assert asked_terms(question) is None


def test_every_rule_has_a_name_and_a_why():
    names = [rule.name for rule in ASKED_RULES]
    assert len(set(names)) == len(names) and all(rule.why for rule in ASKED_RULES)
