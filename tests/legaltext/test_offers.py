"""Offers to settle (``legaltext/offers.py``): the sum the other side offers, who offers it, and
what is no offer (a wish, a condition, a question, a payment made)."""
from __future__ import annotations

import pytest

from legaltext.offers import RULES, offers, same_side


@pytest.mark.parametrize("text, amount, side, rule", [
    ("公司HR前两天私下找她，说愿意给3万了事，她觉得太少。", 30000, "公司", "willing-to-pay"),
    ("公司那边也松口了，HR昨天说可以出5万8。", 58000, "hr", "willing-to-pay"),
    ("保险公司理赔员昨天打电话来，说可以一次性赔6万了结。", 60000, "保险公司", "willing-to-pay"),
    ("保险公司那边又涨到8万5了，黄淑芬问我要不要接受。", 85000, "保险公司", "raised-or-lowered"),
    ("人事又打来电话，公司又加到了3万5，条件是签一份协议。", 35000, "公司", "raised-or-lowered"),
    ("房东今天微信说，退房后最多退我3500，剩下的抵扣损失。", 3500, "房东", "willing-to-pay"),
    ("The store now says it was a display unit and offers me a 1,000 yuan voucher.", 1000, "store",
     "offer-in-english"),
    ("As discussed, the Company proposes to pay RMB 132,000 in full and final settlement.", 132000, "company",
     "offer-in-english"),
])
def test_an_offer_is_read_with_its_side(text, amount, side, rule):
    [offer] = offers(text)
    assert float(offer.amount.magnitude) == amount
    assert side in offer.sides and offer.rule == rule


def test_another_offer_in_english_is_read_across_its_two_sentences():
    [offer] = offers("Emily sent another offer today. Same wording as before, but the amount is now RMB 150,000.")
    assert float(offer.amount.magnitude) == 150000 and offer.again and offer.rule == "offer-now-in-english"


@pytest.mark.parametrize("text", [
    "她希望尽快拿到钱，如果公司愿意一次性给8万，她就不去仲裁了。",     # a condition: the client's floor
    "她说公司如果能给到8万，就同意调解，低于8万就开庭。",
    "建议把调解底线定在9万元左右再谈。",                               # advice
    "房东可以退2000元押金吗？",                                         # a question
    "我给了他2万。",                                                     # a payment made
    "They offered N+1, but they calculated N on a base salary of 18,000.",  # the sum is a salary
    "房东说房租又涨到5000了。",                                          # a rent that rose: nobody offered
    "她的工资已经涨到8200。",
])
def test_what_is_no_offer(text):
    assert offers(text) == []


def test_one_side_or_another():
    insurer = offers("保险公司理赔员昨天打电话来，说可以一次性赔6万了结。")[0]
    driver = offers("对方司机昨天说愿意私了，一次性给2万。")[0]
    raised = offers("保险公司那边又涨到8万5了。")[0]
    assert same_side(raised, insurer) and not same_side(driver, insurer)


def test_every_rule_is_named_and_explained():
    assert len({rule.name for rule in RULES}) == len(RULES)
    assert all(rule.why for rule in RULES)
