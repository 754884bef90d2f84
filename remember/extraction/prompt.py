"""The LLM side of knowledge extraction: the product's prompt, the JSON schema the
answer must match, and the rule for skipping trivial turns (docs/write-path.md, Extraction).

The prompt's wording is pinned by tests/remember/extraction/test_prompt.py (its doubled braces are
what ``str.format`` turns into the literal JSON example). The schema stays within
what every OpenAI-compatible server accepts in ``json_schema`` mode (no
length or count keywords); the five-item and 1000-character limits are
enforced afterwards by ``items.validate_items``.
"""

from __future__ import annotations

from typing import Any

from memory.categories import Category

#: Who said an item: the user's message, the reply, or both (``items.ExtractedItem.speaker``).
SPEAKERS: tuple[str, ...] = ("user", "assistant", "turn")

#: The extraction prompt (Chinese: the product's users and most servers' best language).
_KNOWLEDGE_EXTRACT_PROMPT = """你是一个知识提取引擎。从下面的对话交互中，提取出有价值的结构化知识点。

【用户消息】{user_msg}
【AI回复】{ai_resp}

提取规则:
1. 只提取事实性知识,不存"用户问了什么/AI回答了什么"
2. 每条知识点必须独立可理解
3. 重点关注: 用户偏好/案件事实/证据材料/时间线/金额/法律依据/诉求
4. 每条附 category: 事实|证据|法条|诉求|偏好|行动建议
5. 每条附 speaker: user(用户说的)|assistant(AI回复说的)|turn(两者都有); AI说的只能是 法条 或 行动建议,不是用户的事实或证据
6. 用户的提问不是事实,不要把问题写成结论; 事实和证据里的金额、日期、编号必须是用户说过的,不要计算或补充
7. 每条是完整的句子,保留人名,不要把有名字的当事人写成"用户"

返回 JSON: {{"knowledge": [{{"content": "...", "category": "...", "speaker": "..."}}]}}"""

#: The system message for JSON mode.
EXTRACTION_SYSTEM_PROMPT = "You must respond with a JSON object."

#: Truncation: the prompt sees at most this much of each side.
USER_MSG_LIMIT = 500
AI_RESP_LIMIT = 1500

#: Trivial-turn thresholds (on stripped text): skip when both are shorter.
TRIVIAL_USER_CHARS = 8
TRIVIAL_REPLY_CHARS = 30

#: Name of the schema in a ``json_schema`` response format.
KNOWLEDGE_SCHEMA_NAME = "knowledge_extraction"

#: ``{"knowledge": [{"content": ..., "category": one of the six, "speaker": optional}]}``:
#: "speaker" is optional so a server or model that leaves it out still answers validly.
KNOWLEDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "knowledge": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "category": {"type": "string", "enum": [c.zh for c in Category]},
                    "speaker": {"type": "string", "enum": list(SPEAKERS)},
                },
                "required": ["content", "category"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["knowledge"],
    "additionalProperties": False,
}


#: What a reply must be as a whole. Items are checked one by one afterwards
#: (``items.validate_items``: aliases mapped, a bad item dropped with its reason), so one
#: unknown category never costs the other items of the reply.
KNOWLEDGE_ENVELOPE: dict[str, Any] = {
    "type": "object",
    "properties": {"knowledge": {"type": "array"}},
    "required": ["knowledge"],
}

#: The example reply shown to servers that cannot enforce the schema (json_object / plain
#: mode): the shape to fill in, not the schema itself, which small models echo back.
KNOWLEDGE_EXAMPLE: dict[str, Any] = {"knowledge": [{"content": "...", "category": "事实", "speaker": "user"}]}


def build_extraction_prompt(user_msg: str, ai_resp: str) -> str:
    """The prompt for one turn: user message cut to 500 chars, reply to 1500."""
    return _KNOWLEDGE_EXTRACT_PROMPT.format(
        user_msg=(user_msg or "")[:USER_MSG_LIMIT],
        ai_resp=(ai_resp or "")[:AI_RESP_LIMIT],
    )


def is_trivial_turn(user_msg: str, ai_resp: str) -> bool:
    """Nothing worth extracting when the stripped user message is under
    8 characters and the stripped reply under 30 ("好的" / "收到")."""
    return len((user_msg or "").strip()) < TRIVIAL_USER_CHARS and len((ai_resp or "").strip()) < TRIVIAL_REPLY_CHARS
