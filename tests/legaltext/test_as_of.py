"""``legaltext.as_of``: which questions ask about the memory as it stood on a date, and which date."""
from __future__ import annotations

from datetime import date

import pytest

from legaltext.as_of import RULES, as_of_in, held_from, past_event_in

ASKED_ON = date(2026, 4, 20)


@pytest.mark.parametrize("question, day, rule", [
    ("截至2026年3月1日，林晓雯的押金是多少？", date(2026, 3, 1), "zh-jiezhi"),
    ("截止到3月10日对方出价多少？", date(2026, 3, 10), "zh-jiezhi"),
    ("截至2026年3月，月租金是多少", date(2026, 3, 31), "zh-jiezhi"),
    ("3月10号那会儿对方出价多少？", date(2026, 3, 10), "zh-then"),
    ("2026年2月1日的时候租金是多少", date(2026, 2, 1), "zh-then"),
    ("上周三那时候的报价是多少？", date(2026, 4, 15), "zh-then"),
    ("As of 1 March 2026, what was the deposit?", date(2026, 3, 1), "en-as-of"),
    ("What was the settlement offer as at 15 March 2026?", date(2026, 3, 15), "en-as-of"),
])
def test_a_question_read_at_a_date(question, day, rule):
    found = as_of_in(question, ASKED_ON)
    assert found is not None and (found.day, found.rule) == (day, rule), found


@pytest.mark.parametrize("question", [
    "押金是3月1日交的吗？",  # the date is what is asked about
    "林晓雯的押金是多少？",
    "What was agreed on 1 March 2026?",
    "合同2027年3月14日到期，还能续租吗？",
    "租期到2027年3月14日，房东能提前收房吗？",  # 到 a date: until, not as of
    "截至目前押金退了吗？",  # no date
    "",
])
def test_a_question_not_read_at_a_date(question):
    assert as_of_in(question, ASKED_ON) is None


def test_every_rule_is_named_and_explained():
    assert len({rule.name for rule in RULES}) == len(RULES)
    assert all(rule.why and (rule.before or rule.after) for rule in RULES)


@pytest.mark.parametrize("question, event, first, rule", [
    ("我们第一次建议韩立军别签离职协议的时候，公司报价是多少？", "建议韩立军别签离职协议", True, "zh-when-we-did"),
    ("我们最开始给陶建明算利息的时候，本金按多少算的？", "给陶建明算利息", True, "zh-when-we-did"),
    ("你最早帮我分交强险和商业险怎么赔的时候，医疗费是按多少算的？", "帮我分交强险和商业险怎么赔", True,
     "zh-when-we-did"),
    ("律师发律师函那会儿，欠款是多少？", "发律师函", False, "zh-when-we-did"),
    ("When you first advised me to hold back the third instalment, what contract price was that advice based on?",
     "advised me to hold back the third instalment", True, "en-when-you-did"),
    ("What was the deposit when we sent the demand letter?", "sent the demand letter", False, "en-when-you-did"),
    ("当初你让孙雅琴先发催告那会儿，维修报价是多少？", "让孙雅琴先发催告", True, "zh-when-we-did"),
    ("你说等鉴定结论出来再谈更稳妥，那时我约的鉴定是哪天？", "说等鉴定结论出来再谈更稳妥", False, "zh-when-we-did"),
    ("你当时说还没到期的时候，约定的还款日是哪天？", "当时说还没到期", False, "zh-when-we-did"),
    ("第一次算赔偿时用的月工资是多少？", "算赔偿", True, "zh-first-time-did"),
    ("At the time you advised me to take dated photos, what was the completion date?",
     "advised me to take dated photos", False, "en-when-you-did"),
    ("What contract price did your first advice on the Article 526 defence use?",
     "advice on the Article 526 defence", True, "en-your-advice"),
])
def test_a_moment_named_by_what_we_did(question, event, first, rule):
    found = past_event_in(question)
    assert found is not None and (found.event, found.first, found.rule) == (event, first, rule), found


@pytest.mark.parametrize("question", [
    "我们签合同的时候押金是多少？",  # the client's own act in the world, not the firm's
    "你建议我起诉的时候要注意什么？",  # a plain 的时候 with no past word: the future
    "我及时告诉房东了吗？",  # 及时 is no moment
    "你觉得我起诉要准备什么？",  # no moment
    "押金是多少？",
    "When is the hearing?",
    "",
])
def test_no_moment_named_by_what_we_did(question):
    assert past_event_in(question) is None


def test_every_event_rule_is_named_and_explained():
    from legaltext.as_of import EVENT_RULES

    assert len({rule.name for rule in EVENT_RULES}) == len(EVENT_RULES) and all(rule.why for rule in EVENT_RULES)


@pytest.mark.parametrize("text, day, rule", [
    ("2024年3月起租金5000元", date(2024, 3, 1), "zh-date-on"),
    ("补充协议自2026年4月1日起把月租金从4500元调到4800元", date(2026, 4, 1), "zh-from-date"),
    ("自2025年1月1日至2026年12月31日", date(2025, 1, 1), "zh-from-date"),
    ("从去年3月开始没交物业费", date(2025, 3, 1), "zh-from-date"),
    ("The new rent of RMB 4,800 applies from 1 April 2026.", date(2026, 4, 1), "en-from-date"),
])
def test_when_a_fact_began_to_hold_from_its_words(text, day, rule):
    assert held_from(text, ASKED_ON) == (day, rule)


@pytest.mark.parametrize("text", [
    "2026年3月1日起诉",  # 起诉: to sue, not "from"
    "合同于2025年6月30日到期",  # an end, not a start
    "押金是3000元",
    "上个月起",  # nothing to resolve it against without the day said
])
def test_no_start_in_the_words(text):
    assert held_from(text, None if text == "上个月起" else ASKED_ON) is None


@pytest.mark.parametrize("text", ["截至农历2026年正月十五，租金是多少？", "阴历3月5日那会儿押金是多少？"])
def test_a_lunar_date_names_no_moment(text):
    assert as_of_in(text, ASKED_ON) is None and held_from(text, ASKED_ON) is None
