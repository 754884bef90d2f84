"""Chinese relative dates resolved against the day said (the English ones are in
test_offline_english.py); without that day the engine writes them as before."""

from __future__ import annotations

from datetime import date

import pytest

from remember.extraction import extract_offline
from legaltext.dates_zh import resolve_zh

SAID_ON = date(2023, 5, 8)  # a Monday


@pytest.mark.parametrize(
    ("phrase", "resolved"),
    [("昨天", "2023年5月7日"), ("前天", "2023年5月6日"), ("上周三", "2023年5月3日"), ("上周", "2023年5月1日那一周"),
     ("上个月", "2023年4月"), ("去年", "2022年"), ("去年12月", "2022年12月"), ("3月5日", "2023年3月5日"),
     # a month and day over seven months ahead of the day said is last year's
     ("八月二十日", "2023年8月20日"), ("十二月二十日", "2022年12月20日"),
     ("三天前", "2023年5月5日"), ("两周前", "2023年4月24日那一周")],
)
def test_relative_dates(phrase: str, resolved: str) -> None:
    assert resolve_zh(phrase, SAID_ON) == resolved


@pytest.mark.parametrize("phrase", ["2024年3月5日", "购买后约两周", "2月30日", "半年前"])
def test_absolute_impossible_and_event_anchored_dates_are_not_resolved(phrase: str) -> None:
    assert resolve_zh(phrase, SAID_ON) is None


def test_the_note_carries_the_resolution_beside_the_phrase() -> None:
    text = "昨天我给客服打了电话，他们说最多只能换货不能退款，我录音了。"
    item = extract_offline(text, "", user_name="alice", said_on=SAID_ON)[0]
    assert item.content == "昨天（2023年5月7日）用户给客服打了电话，他们说最多只能换货不能退款，用户录音了。"
    assert item.dates == ["2023年5月7日"]
    assert "2023" not in "".join(item.keywords)
    unanchored = extract_offline(text, "")[0]  # no day said: as written, as before
    assert unanchored.content == "昨天用户给客服打了电话，他们说最多只能换货不能退款，用户录音了。"


def test_a_day_whose_year_the_message_gives_is_never_shifted_to_the_year_said() -> None:
    """Live (issue 56): "2025年2月28日" became "2025年2月28日（2026年2月28日）"."""
    said_on = date(2026, 12, 5)
    text = "租期从2024年3月1日到2025年2月28日，房东说2月28日以后押金就不退了。"
    item = extract_offline(text, "", user_name="alice", said_on=said_on)[0]
    assert "（2026年2月28日）" not in item.content and "（2025年2月28日）" not in item.content
    assert "2025年2月28日" in item.content


def test_today_is_left_as_said() -> None:
    """"到今天" is the day the message was said, which the note records: "到今天（2026年12月5日）"
    read as a fact that the server's date is part of what the client said (issue 56)."""
    text = "从2025年3月20日到今天，房东一直没有退还押金2000元。"
    item = extract_offline(text, "", user_name="alice", said_on=date(2026, 12, 5))[0]
    assert "2026年12月5日" not in item.content and "到今天" in item.content


def test_a_month_and_day_takes_the_year_its_sentence_gave() -> None:
    text = "去年9月跟筑家装饰签了全包合同，9月21日开工，工期90天。"
    item = extract_offline(text, "", user_name="alice", said_on=date(2026, 1, 15))[0]
    assert "9月21日（2025年9月21日）" in item.content
    text = "她是2020年6月16日入职的，3月16日是去面试的日子。"
    item = extract_offline(text, "", user_name="alice", said_on=date(2026, 3, 20))[0]
    assert "3月16日（2020年3月16日）" in item.content
