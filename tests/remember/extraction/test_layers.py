"""Categories decide layers: only a genuine statute or rule reaches the firm-wide general_law
layer; advice labelled 法条 is an action item (issue 12: "押金条丢了，应立即联系银行…" was
stored as 法条 in general_law)."""
from __future__ import annotations

import pytest

from remember.extraction import validate_items
from remember.extraction.items import Category, cites_statute, is_advice, scope_for


@pytest.mark.parametrize(
    ("content", "category", "scope"),
    [
        ("《消费者权益保护法》第二十四条规定不符合质量要求的商品可以退货", "法条", "general_law"),
        ("《民法典》第五百零九条规定当事人应当全面履行义务", "法律依据", "general_law"),
        ("Article 24 of the Consumer Protection Act allows a return of defective goods", "law", "general_law"),
        ("押金条丢了，应立即联系银行", "法条", "case"),  # advice, no statute
        ("根据《消费者权益保护法》第二十四条，建议您要求商家退货", "法条", "case"),  # advice citing a statute
        ("You should keep the receipts and file a complaint", "law", "case"),
        ("七天无理由退货", "法条", "case"),  # a rule of thumb without a source stays with the matter
        ("建议先与房东协商退还押金", "行动建议", "case"),
    ],
)
def test_only_statutes_reach_general_law(content: str, category: str, scope: str) -> None:
    (item,), reasons = validate_items([{"content": content, "category": category}])
    assert reasons == []
    assert item.scope_hint == scope


def test_advice_labelled_as_law_becomes_an_action_item() -> None:
    (item,), _ = validate_items([{"content": "押金条丢了，应立即联系银行挂失", "category": "法条"}])
    assert item.category == "行动建议"
    assert item.category_slug == "action"


def test_an_extractor_hint_cannot_publish_advice_firm_wide() -> None:
    (item,), _ = validate_items(
        [{"content": "建议保留聊天记录作为证据", "category": "行动建议", "scope_hint": "general_law"}]
    )
    assert item.scope_hint == "case"
    assert scope_for(Category.PREFERENCE, "我喜欢先看结论", "general_law") == "user_profile"


def test_placeholder_content_copied_from_the_example_is_dropped() -> None:
    items, reasons = validate_items([{"content": "...", "category": "事实"}, {"content": "……", "category": "事实"}])
    assert items == []
    assert reasons == ["item 1: content has no words: '...' [content-has-words]", "item 2: content has no words: '……' [content-has-words]"]


def test_advice_and_statute_detection_in_both_languages() -> None:
    assert is_advice("建议您尽快起诉")
    assert is_advice("We recommend sending a demand letter")
    assert not is_advice("合同约定押金3000元")
    assert cites_statute("《劳动合同法》第八十二条")
    assert cites_statute("Section 5 of the Act")
    assert not cites_statute("房东拒绝退还押金")
