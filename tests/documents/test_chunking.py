"""A page's chunks and what carries to the next page (``documents.chunking``)."""
from __future__ import annotations

import pytest

from documents.chunking import chunk_page, unfinished_article

PAGE_ENDING_INSIDE_AN_ARTICLE = ("第四条 乙方应按月支付租金。\n"
                                 "第五条 乙方应于签订本合同时支付押金3000元。租赁期满或\n合同解除后，乙方交还房屋的，")


def test_an_article_the_page_ends_inside_of_heads_the_next_page_whole() -> None:
    carried = "第五条 乙方应于签订本合同时支付押金3000元。租赁期满或\n合同解除后，乙方交还房屋的，"
    assert unfinished_article(PAGE_ENDING_INSIDE_AN_ARTICLE) == carried
    _, heading = chunk_page(PAGE_ENDING_INSIDE_AN_ARTICLE)
    spans, _ = chunk_page("甲方应于七日内退还押金。\n第六条 维修由甲方负责；因乙方使用不当造成损坏的，由乙方负责维修。" * 3, heading)
    assert spans[0].heading == carried
    assert all(span.heading == carried.split("\n")[0] for span in spans[1:])


@pytest.mark.parametrize("text", [
    "第四条 乙方应按月支付租金。\n第五条 押金3000元。",      # the page ends a sentence
    "第四条 乙方应按月支付租金。\n\n附件：房屋交接清单",         # its last paragraph is no article
    "乙方应按月支付租金，",                                    # no article opens on it
    "第五条 " + "押金" * 200 + "，",                            # too long to carry
])
def test_nothing_is_carried_when_the_page_ends_no_article(text: str) -> None:
    assert unfinished_article(text) == ""
