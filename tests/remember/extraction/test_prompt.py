"""The extraction prompt (docs/write-path.md, Extraction), its schema and the trivial-turn rule."""

from __future__ import annotations

import hashlib
import json

import pytest

from remember.extraction import (
    _KNOWLEDGE_EXTRACT_PROMPT,
    KNOWLEDGE_SCHEMA,
    build_extraction_prompt,
    is_trivial_turn,
)

# SHA-256 of the product's extraction prompt (remember/extraction/prompt.py): a change to the
# wording changes what every LLM extracts, so it must be deliberate and update this fingerprint.
PROMPT_SHA256 = "b68936557b550ce63aee583e84c616ea3157173cf44540979bac50fd332c7df6"


def test_prompt_text_is_pinned() -> None:
    assert hashlib.sha256(_KNOWLEDGE_EXTRACT_PROMPT.encode("utf-8")).hexdigest() == PROMPT_SHA256


def test_prompt_fills_and_truncates_each_side() -> None:
    user = "用" * 600
    reply = "答" * 2000
    prompt = build_extraction_prompt(user, reply)
    assert prompt.startswith("你是一个知识提取引擎。")
    assert "【用户消息】" + "用" * 500 + "\n" in prompt
    assert "【AI回复】" + "答" * 1500 + "\n" in prompt
    assert "用" * 501 not in prompt
    assert "答" * 1501 not in prompt
    assert prompt.endswith('返回 JSON: {"knowledge": [{"content": "...", "category": "...", "speaker": "..."}]}')
    assert "4. 每条附 category: 事实|证据|法条|诉求|偏好|行动建议" in prompt
    assert "5. 每条附 speaker: user(用户说的)|assistant(AI回复说的)|turn(两者都有)" in prompt


def test_braces_in_the_turn_are_kept_literally() -> None:
    prompt = build_extraction_prompt("合同里写着{押金}3000元", "{}")
    assert "【用户消息】合同里写着{押金}3000元" in prompt
    assert "【AI回复】{}" in prompt


def test_schema_lists_the_six_categories_and_the_optional_speaker() -> None:
    item = KNOWLEDGE_SCHEMA["properties"]["knowledge"]["items"]
    assert item["properties"]["category"]["enum"] == ["事实", "证据", "法条", "诉求", "偏好", "行动建议"]
    assert item["properties"]["speaker"]["enum"] == ["user", "assistant", "turn"]
    assert item["required"] == ["content", "category"]  # a reply without "speaker" stays valid
    assert KNOWLEDGE_SCHEMA["required"] == ["knowledge"]
    json.dumps(KNOWLEDGE_SCHEMA, ensure_ascii=False)  # serialisable for the schema hint


@pytest.mark.parametrize(
    ("user", "reply", "trivial"),
    [
        ("好的", "不客气。", True),
        ("  谢谢  ", "", True),
        ("", "", True),
        ("1234567", "x" * 29, True),
        ("12345678", "", False),  # 8 characters is enough
        ("好的", "x" * 30, False),  # a long reply alone is enough
        ("那我现在该咋办？", "", False),
    ],
)
def test_trivial_turn_thresholds(user: str, reply: str, trivial: bool) -> None:
    assert is_trivial_turn(user, reply) is trivial
