"""Categories and the validation of raw extractor output (LLM JSON)."""

from __future__ import annotations

import pytest

from remember.extraction import MAX_CONTENT_CHARS, Category, ExtractedItem, clean_text, validate_items
from memory.models import Category as NoteCategory


def test_one_category_enum_stores_slugs_and_speaks_the_seed_labels() -> None:
    assert [c.zh for c in Category] == ["事实", "证据", "法条", "诉求", "偏好", "行动建议"]
    assert [c.value for c in Category] == ["fact", "evidence", "law", "claim", "preference", "action"]
    assert Category("evidence") is Category.EVIDENCE
    assert Category.parse("证据") is Category.EVIDENCE
    assert Category is NoteCategory  # the extractor and the Note model share one enum


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("事实", Category.FACT),
        ("facts", Category.FACT),
        ("Fact", Category.FACT),
        (" fact ", Category.FACT),
        ("证据材料", Category.EVIDENCE),
        ("Evidence", Category.EVIDENCE),
        ("法律依据", Category.LAW),
        ("legal_basis", Category.LAW),
        ("claims", Category.CLAIM),
        ("用户偏好", Category.PREFERENCE),
        ("next-step", Category.ACTION),
        ("建议", Category.ACTION),
        ("banana", None),
        ("", None),
        (None, None),
        (3, None),
    ],
)
def test_category_aliases(raw: object, expected: Category | None) -> None:
    assert Category.parse(raw) is expected


def test_valid_llm_items_are_completed_into_notes() -> None:
    raw = [
        {"content": "笔记本电脑在购买后约两周出现大面积花屏。", "category": "事实"},
        {"content": "用户已保存电子发票、付款截图、花屏照片和三次客服录音。", "category": "证据"},
        {"content": "该用户偏好先给结论，再列证据清单，最后给协商、投诉、起诉路径。", "category": "偏好"},
        {"content": "《消费者权益保护法》第二十四条规定商品不符合质量要求的可以退货。", "category": "法条"},
        {"content": "用户要求商家退还货款5999元。", "category": "诉求"},
    ]
    items, reasons = validate_items(raw, source_text="我的笔记本电脑花屏了")
    assert reasons == []
    assert [i.category for i in items] == ["事实", "证据", "偏好", "法条", "诉求"]
    fact, evidence, preference, law, claim = items
    assert (fact.memory_type, fact.scope_hint, fact.dates) == ("event", "case", ["约两周"])
    assert fact.context == "关于电脑花屏纠纷的事件经过"
    assert "花屏" in fact.keywords
    assert (evidence.memory_type, evidence.scope_hint) == ("fact", "case")
    assert evidence.context == "关于电脑花屏纠纷的证据"
    assert {"电子发票", "付款截图", "客服录音"} <= set(evidence.keywords)
    assert (preference.memory_type, preference.scope_hint) == ("attribute", "user_profile")
    assert "电脑花屏纠纷" not in preference.tags
    assert (law.memory_type, law.scope_hint) == ("fact", "general_law")
    assert law.context == "关于《消费者权益保护法》第二十四条的法律依据"
    assert claim.amounts == ["5999元"]
    assert claim.importance > fact.importance
    for item in items:
        assert isinstance(item, ExtractedItem)
        assert item.confidence == 0.8  # LLM default: clears the ADD bar (> 0.7)
        assert item.speaker == "turn"
        assert item.tags[0] == item.category


def test_fields_given_by_the_extractor_are_used_when_valid() -> None:
    raw = [
        {
            "content": "用户于2024年3月5日购买笔记本电脑。",
            "category": "fact",
            "confidence": 0.93,
            "importance": 0.4,
            "memory_type": "fact",
            "scope_hint": "cross_case",
            "keywords": ["笔记本电脑", 7, ""],
            "context": "关于购买时间的事实",
        },
        {"content": "用户已保存发票。", "category": "证据", "confidence": 7, "memory_type": "story", "scope_hint": "x"},
    ]
    items, reasons = validate_items(raw)
    assert reasons == []
    first, second = items
    assert (first.confidence, first.importance, first.memory_type, first.scope_hint) == (0.93, 0.4, "fact", "cross_case")
    assert first.keywords == ["笔记本电脑"]
    assert first.context == "关于购买时间的事实"
    assert first.dates == ["2024年3月5日"]
    # Out-of-range confidence and unknown type/scope fall back to the defaults.
    assert (second.confidence, second.memory_type, second.scope_hint) == (0.8, "fact", "case")


def test_rejected_items_come_with_reasons() -> None:
    raw = [
        {"content": "   ", "category": "事实"},
        {"category": "证据"},
        {"content": 42, "category": "事实"},
        {"content": "商家拒绝退款。", "category": "gossip"},
        {"content": "商家拒绝退款。"},
        "not a dict",
        {"content": "商家拒绝退款。", "category": "事实"},
        {"content": "商家 拒绝退款！", "category": "facts"},
    ]
    items, reasons = validate_items(raw)  # type: ignore[arg-type]
    assert [i.content for i in items] == ["商家拒绝退款。"]
    assert reasons == [
        "item 1: missing content [content-present]",
        "item 2: missing content [content-present]",
        "item 3: content is not text (int) [content-is-text]",
        "item 4: unknown category 'gossip' for '商家拒绝退款。' [known-category]",
        "item 5: unknown category 'None' for '商家拒绝退款。' [known-category]",
        "item 6: not an object (str) [item-is-an-object]",
        "item 8: duplicate within the turn: '商家 拒绝退款！' [once-per-turn]",
    ]


def test_at_most_five_items_are_kept() -> None:
    raw = [{"content": f"用户第{n}次联系客服，商家仍拒绝退货。", "category": "事实"} for n in range(1, 9)]
    items, reasons = validate_items(raw)
    assert len(items) == 5
    assert [i.content for i in items] == [r["content"] for r in raw[:5]]
    assert len(reasons) == 3
    assert all("over the limit of 5 items" in r for r in reasons)


def test_content_is_stripped_cleaned_and_capped() -> None:
    raw = [
        {"content": "\x00  商家\x07以人为损坏为由\u200b拒绝退换😡\x1b  ", "category": "事实"},
        {"content": "用户" + "很" * 5000 + "生气。", "category": "事实"},
    ]
    items, reasons = validate_items(raw)
    assert reasons == []
    assert items[0].content == "商家以人为损坏为由拒绝退换"
    assert len(items[1].content) == MAX_CONTENT_CHARS


def test_not_a_list() -> None:
    items, reasons = validate_items({"knowledge": []})  # type: ignore[arg-type]
    assert items == []
    assert reasons == ["expected a list of items, got dict"]


def test_clean_text_keeps_currency_and_chinese_punctuation() -> None:
    assert clean_text("￥3,299\x00元，“不能退。”\r\n下一行", keep_newlines=True) == "￥3,299元，“不能退。”\n下一行"
    assert clean_text("a\tb\nc") == "a b c"
    assert clean_text("\ud800坏") == "坏"  # lone surrogate: PostgreSQL would reject it
    assert clean_text("") == ""
