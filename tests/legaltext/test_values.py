"""The values a correction names and the words that replace them (``legaltext.values``), and
the reader's corrections that state both values (``legaltext.corrections``)."""
from __future__ import annotations

import pytest

import legaltext
from legaltext.dates_zh import resolve_zh
from legaltext.dates import date_phrases
from legaltext.values import replaced, the_value, values


@pytest.mark.parametrize("text, kind", [
    ("2000元", "money"), ("3000", "number"), ("住院7天", "day"), ("休息两天", "day"), ("3万个", "number"),
    ("31 July 2026", "date"), ("30 June", "date"), ("2月27日", "date"),
    ("上午9点半", "time"), ("下午2点", "time"), ("30日内", "day"), ("每日万分之五", "percent"), ("百分之三十", "percent"),
    ("千分之1.5", "percent"), ("是他2018年买的", "date"),
    ("新号码是138 6712 0935", "phone"), ("手机13867120935", "phone"), ("139-0571-2846", "phone"),
])
def test_one_value_and_its_kind(text, kind):
    assert the_value(text).kind == kind


@pytest.mark.parametrize("a, b, same", [
    ("2000", "押金2000元", True),          # a bare number is the sum the slot word named
    ("7天", "住院7天", True),
    ("两天", "一个月休息两天", True),       # Chinese numerals
    ("3万个", "有3万个袋子", True),
    ("30 June", "until 30 June 2026", True),  # a day without its year
    ("7", "住院7天", False),              # a bare number is no length of time
    ("30 June", "30 July 2026", False),
    ("7天", "7个月", False),
    ("138 6712 0935", "手机13867120935", True),  # a phone number's digits, however grouped
    ("138 6712 0935", "139 0571 2846", False),
    ("下午2点", "14时", True),  # minutes after midnight
    ("万分之五", "0.05%", True),  # a rate in words is the rate in figures
    ("千分之一", "万分之五", False),
    ("下午2点", "上午2点", False),
    ("2018年", "是他2018年买的", True),  # a year alone
    ("2018年", "2018年10月", False),      # a year is not one of its months
])
def test_values_match_by_kind_and_magnitude(a, b, same):
    value = the_value(a)
    assert any(value.matches(v) for v in values(b)) is same


@pytest.mark.parametrize("stored, new, words", [
    ("2000元", "3000", "3000元"),      # the stored form keeps its unit
    ("两天", "休息四天", "四天"),
    ("7天", "住院9天", "9天"),
    ("3万", "2万个", "2万"),
    ("30 June 2026", "on 31 July 2026", "31 July 2026"),
])
def test_the_replacement_keeps_the_stored_form(stored, new, words):
    assert replaced(the_value(stored), the_value(new)) == words


@pytest.mark.parametrize("text, new, old", [
    ("上次说医疗费23600元，我把发票又加了一遍，其实是25180元，漏了一张复查的发票。", "25180元", "医疗费23600元"),
    ("Actually, the contract ends on 31 July 2026, not 30 June — I just checked my signed copy.",
     "on 31 July 2026", "30 June"),
    ("不是住院7天，是住院9天。", "住院9天", "住院7天"),
    ("刚才说错了，一个月是休息四天，不是两天。", "休息四天", "两天"),
])
def test_corrections_that_state_both_values(text, new, old):
    found = [c for c in legaltext.read(text).corrections if c.new and c.old]
    assert [(c.new, c.old) for c in found] == [(new, old)]


def test_a_later_value_without_a_recalled_one_is_no_correction():
    assert legaltext.read("律师费其实是按小时收的。").corrections == ()


@pytest.mark.parametrize("phrase, resolved", [
    ("今年2月底", "2026年2月底"), ("上个月初", "2026年2月初"), ("去年3月15日", "2025年3月15日"),
])
def test_a_part_of_a_relative_month_resolves_with_its_part(phrase, resolved):
    from datetime import date
    assert resolve_zh(phrase, date(2026, 3, 2)) == resolved


def test_date_phrases_keep_a_relative_month_with_its_day():
    """'去年3月15日' is one phrase: resolving '去年3月' alone wrote '去年3月（2025年3月）15日'."""
    assert date_phrases("去年3月15日起租，今年2月底她退租了。") == ["去年3月15日", "今年2月底"]


@pytest.mark.parametrize("text", ["万分之.", "千分之", "百分之。", "99点", "下午点", "30日"])
def test_odd_rates_and_times_are_read_without_an_error(text):
    values(text)  # whatever it finds, a malformed rate or hour never raises


def test_a_number_before_hao_is_no_count_or_sum():
    """"物业法务说20号没空": a day of the month or a door's number, never the count 20 (dev5: it made
    "两个更新" into "20个更新" and a fee of 2.5元 into 20元)."""
    assert [v.text for v in values("物业法务说20号没空，地址是湖墅南路88号。")] == []
