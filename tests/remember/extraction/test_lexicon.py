"""Dates, amounts, statutes, topics, keywords and contexts."""

from __future__ import annotations

import socket
import subprocess

import pytest

from remember.extraction import (
    ExtractedItem,
    context_for,
    detect_topic,
    extract_amounts,
    extract_dates,
    extract_law_refs,
    extract_offline,
    keywords_for,
)


@pytest.mark.parametrize(
    ("text", "dates"),
    [
        ("我在2024年3月5日买的", ["2024年3月5日"]),
        ("3月5日下单", ["3月5日"]),
        ("三月五日收货", ["三月五日"]),
        ("2024-03-05付款", ["2024-03-05"]),
        ("上周三联系了客服", ["上周三"]),
        ("上个月退租", ["上个月"]),
        ("两周后出现花屏", ["两周后"]),
        ("购买后约两周出现花屏", ["约两周"]),
        ("七日内可以退货", ["七日内"]),
        ("签了一年的合同，有三次录音", []),
    ],
)
def test_dates(text: str, dates: list[str]) -> None:
    assert extract_dates(text) == dates


@pytest.mark.parametrize(
    ("text", "amounts"),
    [
        ("花了5000元", ["5000元"]),
        ("价格￥3,299", ["￥3,299"]),
        ("押金三千元", ["三千元"]),
        ("损失1.5万元", ["1.5万元"]),
        ("收了800块，又要500块钱", ["800块", "500块钱"]),
        ("买了一块屏幕和3台电脑", []),
    ],
)
def test_amounts(text: str, amounts: list[str]) -> None:
    assert extract_amounts(text) == amounts


def test_law_refs() -> None:
    text = "根据《消费者权益保护法》第二十四条和《民法典》第五百七十七条"
    assert extract_law_refs(text) == ["《消费者权益保护法》第二十四条", "《民法典》第五百七十七条"]
    assert extract_law_refs("《红楼梦》很好看") == []


@pytest.mark.parametrize(
    ("text", "topic"),
    [
        ("笔记本电脑买了两周就花屏", "电脑花屏纠纷"),
        ("房东不退押金", "租房押金纠纷"),
        ("培训机构不给退课程费", "课程退款纠纷"),
        ("公司不付加班费", "加班费纠纷"),
        ("维修店多收了维修费", "维修费纠纷"),
        ("今天天气不错", None),
    ],
)
def test_topics(text: str, topic: str | None) -> None:
    assert detect_topic(text) == topic


def test_keywords_drop_stopwords_numbers_and_dates() -> None:
    keywords = keywords_for("用户在2024年3月5日花5999元买了一台笔记本电脑，两周后出现大面积花屏。")
    assert "笔记本电脑" in keywords
    assert "花屏" in keywords
    assert not {"用户", "5999", "日花", "一台", "两周"} & set(keywords)
    assert keywords_for("") == []
    assert keywords_for("   ") == []
    assert len(keywords_for("合同 押金 房东 发票 截图 录音 照片 收据 违约金 加班费", k=3)) == 3
    assert keywords_for("The landlord kept my deposit") == ["landlord", "kept", "deposit"]


def test_keywords_of_a_megabyte_are_bounded() -> None:
    assert len(keywords_for("押金房东违约金" * 150_000)) <= 8


def _item(content: str, category: str, memory_type: str = "fact", tags: list[str] | None = None,
          keywords: list[str] | None = None) -> ExtractedItem:
    return ExtractedItem(content, category, memory_type, 0.8, keywords or [], tags or [category], "", 0.7,
                         "case", [], [])


def test_context_sentences() -> None:
    assert context_for(_item("用户已保存花屏照片。", "证据", tags=["证据", "电脑花屏纠纷"])) == "关于电脑花屏纠纷的证据"
    assert context_for(_item("房东扣了押金。", "事实")) == "关于租房押金纠纷的事实"
    assert context_for(_item("2024年3月5日房东扣了押金。", "事实", "event")) == "关于租房押金纠纷的事件经过"
    assert context_for(_item("《劳动合同法》第八十五条规定……", "法条")) == "关于《劳动合同法》第八十五条的法律依据"
    assert context_for(_item("用户喜欢先看结论。", "偏好", "attribute")) == "关于用户回答方式的偏好"
    assert context_for(_item("用户习惯晚上处理工作。", "偏好", "attribute")) == "关于用户个人习惯的偏好"
    assert context_for(_item("用户要求对方道歉。", "诉求", keywords=["道歉", "对方"])) == "关于道歉的诉求"
    assert context_for(_item("某事。", "行动建议")) == "对话中提到的行动建议"


def test_extraction_never_touches_the_network_or_a_subprocess(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("extraction must stay offline")

    monkeypatch.setattr(socket.socket, "connect", forbidden)
    monkeypatch.setattr(socket, "create_connection", forbidden)
    monkeypatch.setattr(subprocess, "Popen", forbidden)
    monkeypatch.setattr("os.system", forbidden)
    items = extract_offline("我在2024年3月5日买的笔记本电脑两周后出现花屏，商家拒绝退货。", "")
    assert items
    assert items[0].keywords
