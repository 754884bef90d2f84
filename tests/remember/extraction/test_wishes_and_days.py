"""The offline engine's reading of what a client wants and of a day arranged ahead (dev5): a wish
said the way clients say it is a 诉求, and "婚礼是5月2日" after "去年11月订了套餐" is this year's day."""
from __future__ import annotations

from datetime import date

import pytest

from remember.extraction import lexicon
from remember.extraction.offline.units import score
from remember.extraction.offline.wording import with_resolved_chinese_dates


@pytest.mark.parametrize("text", [
    "郑国栋的意思是，钱不是最重要的，他更想把账查清楚。",
    "邱志明最在意的不是钱，是要韩磊当面道歉。",
    "钱他说能拿到六千多就行。",
    "谈不下来的话她宁可等物业去起诉。",
    "她特别说了，不想让母亲上法庭。",
    "林嘉豪希望能给三个月过渡期。",
])
def test_what_the_client_wants_most_is_a_claim(text):
    points = score(text).points
    assert points[lexicon.CLAIM] == max(points.values()), points


def test_a_plain_fact_is_no_claim():
    points = score("物业费每平方米每月2.5元，她从2024年10月开始欠的。").points
    assert points[lexicon.CLAIM] < points[lexicon.FACT]


@pytest.mark.parametrize("text, phrase, resolved", [
    ("婚礼是5月2日。", "5月2日", "2026年5月2日"),                  # a day arranged ahead: this year's
    ("见面时间改到3月24日上午10点。", "3月24日", "2026年3月24日"),
    ("9月21日开工。", "9月21日", "2025年9月21日"),                 # the story before's year
])
def test_a_day_arranged_ahead_is_not_read_in_the_year_of_the_story_before(text, phrase, resolved):
    written, _dates = with_resolved_chinese_dates(text, [phrase], date(2026, 3, 13), year_before="去年")
    assert f"{phrase}（{resolved}）" in written
