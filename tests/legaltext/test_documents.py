"""A document's title, whether it is a contract, and its text mended across hard line breaks
(``legaltext.documents``)."""
from __future__ import annotations

import pytest

from legaltext.documents import document_title, is_contract, mended, named_like_a_file


@pytest.mark.parametrize("text, title", [
    ("房屋租赁合同\n\n出租方（甲方）：周海峰", "房屋租赁合同"),
    ("\n  劳动合同书  \n甲方：杭州锐拓科技有限公司", "劳动合同书"),
    ("RESIDENTIAL LEASE AGREEMENT\nThis lease is made between", "RESIDENTIAL LEASE AGREEMENT"),
    ("# 房屋租赁合同\n\n甲方：周海峰", "房屋租赁合同"),  # a Markdown heading
    ("第一条 甲方将房屋出租给乙方。", None),           # an article is no title
    ("Subject: the deposit\nDear Ms Lin", None),       # a label is no title
    ("林晓雯于2025年3月14日向周海峰转账支付押金3000元，周海峰至今未退还。", None),  # a sentence is no title
])
def test_the_title_is_the_first_line_when_it_reads_as_one(text, title):
    assert document_title(text) == title


@pytest.mark.parametrize("title, text, contract", [
    ("房屋租赁合同", "", True),
    ("scan_0001", "出租方（甲方）：周海峰\n承租方（乙方）：林晓雯", True),
    ("Tenancy", "The Landlord and the Tenant agree", True),
    ("民事判决书", "原告林晓雯诉被告周海峰房屋租赁合同纠纷一案", False),  # a judgment about a contract
])
def test_a_contract_by_its_title_or_its_two_parties(title, text, contract):
    assert is_contract(title, text) is contract


def test_a_term_cut_by_a_hard_line_break_is_mended_whole():
    text = ("第七条 未经甲方书面同意，乙方不得将房屋转租、转借给他人，\n也不得擅自改变房屋结构。\n"
            "第八条 房屋的自然损耗及正常使用产生的墙面污渍，\n不属于乙方应当赔偿的损失范围。")
    assert mended(text).splitlines() == [
        "第七条 未经甲方书面同意，乙方不得将房屋转租、转借给他人，也不得擅自改变房屋结构。",
        "第八条 房屋的自然损耗及正常使用产生的墙面污渍，不属于乙方应当赔偿的损失范围。",
    ]
    assert mended("Clause 4. The Tenant shall not keep pets,\nunless the Landlord agrees.") == (
        "Clause 4. The Tenant shall not keep pets, unless the Landlord agrees.")


@pytest.mark.parametrize("name, machine_made", [
    ("lease_lin_2025_scan", True), ("IMG_0001", True), ("房屋租赁合同", False), ("Lease Agreement", False),
])
def test_only_a_machine_made_file_name_gives_way_to_the_content_title(name, machine_made):
    assert named_like_a_file(name) is machine_made


def test_article_spans_run_from_an_opening_to_the_next() -> None:
    from legaltext.documents import article_spans

    text = "房屋租赁合同\n第五条 押金3000元。\n租赁期满的，七日内退还。\n第六条 维修由甲方负责。\n\n甲方（签字）：周海峰"
    assert [text[start:end] for start, end in article_spans(text)] == [
        "第五条 押金3000元。\n租赁期满的，七日内退还。", "第六条 维修由甲方负责。"]
    signed = "第十条 本合同自双方签字之日起生效。\n甲方（签字）：周建国\n乙方（签字）：林晓雯\n签订日期：2025年2月20日"
    assert [signed[start:end] for start, end in article_spans(signed)] == ["第十条 本合同自双方签字之日起生效。"]
    english = "No article here.\nClause 2. Rent is RMB 7,500."
    assert [english[start:end] for start, end in article_spans(english)] == ["Clause 2. Rent is RMB 7,500."]



@pytest.mark.parametrize(("sentence", "only"), [
    ("根据《中华人民共和国民法典》及有关规定，甲乙双方经协商一致，订立本合同。", True),
    ("甲乙双方根据《中华人民共和国劳动合同法》等法律法规，平等自愿、协商一致，签订本合同。", True),
    ("乙方因经营周转需要向甲方借款，三方经协商一致，订立本协议。", False),  # says why
    ("乙方应于签订本合同时向甲方支付押金人民币3000元。", False),
])
def test_the_formula_of_agreement(sentence: str, only: bool) -> None:
    from legaltext.documents import only_agrees

    assert only_agrees(sentence) is only
