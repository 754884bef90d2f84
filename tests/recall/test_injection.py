"""Context injection: one system message grouped by layer in plan order, within a token budget."""
from __future__ import annotations

import pytest

from recall import build_system_message, estimate_tokens, search_memory
from recall.injection import HEADER

pytestmark = pytest.mark.django_db


def test_token_estimate_counts_cjk_characters_one_each():
    assert estimate_tokens("电脑花屏") == 4
    assert estimate_tokens("押金3000元") == 3 + 1
    assert estimate_tokens("hello world") == 2 + 2
    assert estimate_tokens("") == 0


def test_system_message_groups_by_layer_in_plan_order(world, memory):
    result = search_memory(world.alice, "电脑花屏 质量问题 结论", k=10, matter_id=world.matter_laptop.pk)
    message = build_system_message(result)
    assert message["role"] == "system"
    content = message["content"]
    assert content.startswith(HEADER)
    assert content.index("【当前案件层】") < content.index("【用户画像层】") < content.index(
        "【通用法律层】")
    assert memory["laptop_report"].content in content


def test_budget_is_respected_and_notes_are_never_cut(world, memory):
    result = search_memory(world.alice, "电脑花屏 押金 结论", k=10)
    small = build_system_message(result, token_budget=estimate_tokens(HEADER) + 60)
    assert small is not None
    assert estimate_tokens(small["content"]) <= estimate_tokens(HEADER) + 60 + 10
    included = [hit for hit in result.hits if hit.note.content in small["content"]]
    assert 0 < len(included) < len(result.hits)
    assert build_system_message(result, token_budget=10) is None


def test_nothing_of_another_firm_is_injected(world, memory):
    result = search_memory(world.charlie, "电脑花屏 检测报告", k=10)
    content = build_system_message(result)["content"]
    assert memory["beta_fact"].content in content
    assert memory["laptop_report"].content not in content


def test_without_a_current_matter_each_case_fact_names_its_matter(world, memory):
    """A conversation with no matter recalls facts of several matters: the model is told which
    matter each belongs to, and that none of them is "the current case"."""
    result = search_memory(world.alice, "电脑花屏 押金 扣留", k=10)
    content = build_system_message(result)["content"]

    assert "【当前案件层】" not in content
    assert "【各案件的事实（按案件标注，勿混用）】" in content
    laptop = f"【{world.matter_laptop.reference} {world.matter_laptop.title}】".replace("【 ", "【")
    deposit = f"【{world.matter_deposit.reference} {world.matter_deposit.title}】".replace("【 ", "【")
    assert f"{laptop} [事实] {memory['laptop_screen'].content}" in content
    assert f"{deposit} [事实] {memory['deposit_fact'].content}" in content
    assert world.matter_secret.title not in content  # not assigned: never named


def test_with_a_current_matter_the_case_layer_is_that_matter(world, memory):
    result = search_memory(world.alice, "电脑花屏 检测报告", k=10, matter_id=world.matter_laptop.pk)
    content = build_system_message(result)["content"]

    assert "【当前案件层】" in content
    assert world.matter_deposit.title not in content
