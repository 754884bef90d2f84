"""Step 1 of a story run: get the story — from the LLM (request and response recorded,
``complete_json`` with its json_schema → json_object → plain fallback) or, without an
LLM, from the script shipped in the repository."""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from memory.llm import JSONMode, LLMClient, schema_hint
from memory.models import Firm, Matter
from memory.story.script import OFFLINE_SCRIPT, STORY_SCHEMA, STORY_SCHEMA_NAME, load_offline_script

ENGINE_OFFLINE = "offline script"

STORY_SYSTEM_PROMPT = "你是一名法律咨询场景的编剧。You must respond with a JSON object."

STORY_PROMPT = """请编写一个真实感强的中文法律咨询剧本：同一位用户（{username}）在一个月内（{start} 至 {end}）\
向法律助手咨询多件自己遇到的纠纷。

要求：
1. 至少 {min_events} 个事件，例如电脑花屏、租房押金、课程退款、加班费、维修费，也可以再加其他事件。
2. 每个事件有 key（英文字母、数字、-、_）、name（中文事件名，四到六个字）、matter 和一句 summary。
   matter 必须取下面律所案件编号之一，或者为 null（与这些案件都无关的一般问题）：
{matters}
3. 至少 {min_turns} 轮对话（turns），按时间分布在整个月里，各事件交替出现。每轮包含 event（事件 key）、
   at（ISO 8601 时间，带 +08:00 时区）、user（用户的话）和 assistant（法律助手的回答）。
4. 用户的话要有具体事实：日期、金额、证据（发票、聊天记录、录音、照片、检测报告等）、诉求；
   有的轮次要更正之前说错的事实（例如金额或日期说错了，重新完整地说一遍正确的句子）；
   用户要多次重复自己的偏好（例如“我习惯先看结论再看证据清单”、“我倾向于低成本维权”），每个偏好至少出现三次。
5. 助手的回答简洁专业，可以引用具体法条（例如《消费者权益保护法》第二十四条）并给出行动建议。
6. 只返回 JSON 对象，字段为 title、description、events、turns。"""


@dataclass
class Generation:
    """Where a story came from: the engine, the request as sent, the response as received."""

    engine: str
    story_id: str
    request: dict[str, Any]
    response: dict[str, Any]
    data: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what happened (fallbacks, retries)
    json_mode: str | None = None


def offline_generation() -> Generation:
    """The shipped script: the 'request' says so and the 'response' is the script itself."""
    data = load_offline_script()
    return Generation(
        engine=ENGINE_OFFLINE,
        story_id=str(data.get("story_id") or "month-story"),
        request={
            "engine": ENGINE_OFFLINE,
            "why": "no LLM is configured (LLM_BASE_URL is empty), so the story script shipped in the repository is used",
            "script": str(OFFLINE_SCRIPT.relative_to(OFFLINE_SCRIPT.parent.parent.parent)),
        },
        response=data,
        data=data,
        notes=["no LLM call was made, so no JSON-mode fallback applies; extraction uses the rule-based offline engine"],
    )


def _matter_lines(firm: Firm, user) -> str:
    matters = Matter.objects.filter(firm=firm).order_by("reference")
    lines = [f"   - {m.reference}：{m.title}" for m in matters if m.is_assigned(user)]
    return "\n".join(lines) or "   （没有案件：matter 一律为 null）"


class _Capture(logging.Handler):
    """Collects what the LLM client logs during one call (fallbacks, retries, bad output)."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname}: {record.getMessage()}"[:1000])


def _request_for(mode: JSONMode, prompt: str) -> dict[str, Any]:
    """The chat request ``complete_json`` sends in ``mode`` (the client's documented contract)."""
    if mode is JSONMode.JSON_SCHEMA:
        response_format: dict[str, Any] | None = {
            "type": "json_schema", "json_schema": {"name": STORY_SCHEMA_NAME, "schema": STORY_SCHEMA},
        }
        content = prompt
    else:
        response_format = {"type": "json_object"} if mode is JSONMode.JSON_OBJECT else None
        content = prompt + schema_hint(STORY_SCHEMA)
    return {
        "messages": [{"role": "system", "content": STORY_SYSTEM_PROMPT}, {"role": "user", "content": content}],
        "response_format": response_format,
    }


def generate_story_with_llm(
    client: LLMClient, *, firm: Firm, user, min_turns: int = 80, min_events: int = 5,
    start: str = "2026-03-01", end: str = "2026-03-30",
) -> Generation:
    """Ask the LLM for the story. Raises ``memory.llm.LLMError`` when the server fails or the
    reply stays invalid after the client's retries (the caller turns it into a clear error)."""
    prompt = STORY_PROMPT.format(
        username=user.get_username(), start=start, end=end, min_turns=min_turns, min_events=min_events,
        matters=_matter_lines(firm, user),
    )
    first_mode = client.json_mode
    capture = _Capture()
    llm_logger = logging.getLogger("legalmem.llm")
    llm_logger.addHandler(capture)
    previous_level = llm_logger.level
    if llm_logger.getEffectiveLevel() > logging.INFO:
        llm_logger.setLevel(logging.INFO)
    started = timezone.now()
    try:
        data = client.complete_json(prompt, schema=STORY_SCHEMA, schema_name=STORY_SCHEMA_NAME, system=STORY_SYSTEM_PROMPT)
    finally:
        llm_logger.removeHandler(capture)
        llm_logger.setLevel(previous_level)
    used = client.json_mode
    tried = [m.value for m in (JSONMode.JSON_SCHEMA, JSONMode.JSON_OBJECT, JSONMode.PLAIN)][
        [JSONMode.JSON_SCHEMA, JSONMode.JSON_OBJECT, JSONMode.PLAIN].index(first_mode):
        [JSONMode.JSON_SCHEMA, JSONMode.JSON_OBJECT, JSONMode.PLAIN].index(used) + 1
    ]
    request = {
        "engine": f"llm:{client.config.model}",
        "base_url": client.config.base_url,
        "model": client.config.model,
        "endpoint": "POST /chat/completions",
        "schema_name": STORY_SCHEMA_NAME,
        "json_modes_tried": tried,
        "json_mode_used": used.value,
        "requests_by_mode": {mode: _request_for(JSONMode(mode), prompt) for mode in tried},
        "sent_at": started.isoformat(),
    }
    notes = list(capture.lines)
    if len(tried) > 1:
        notes.append(f"JSON-mode fallback: {' → '.join(tried)} (the server rejected the earlier format)")
    else:
        notes.append(f"JSON mode {used.value} was accepted on the first try")
    response = {"json_mode": used.value, "received_at": timezone.now().isoformat(), "content": data}
    return Generation(
        engine=f"llm:{client.config.model}",
        story_id=f"llm-{started:%Y%m%d%H%M%S}",
        request=request,
        response=response,
        data=data,
        notes=notes,
        json_mode=used.value,
    )


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, indent=2, default=str)
