"""Where an answer's tokens come from: the configured OpenAI-compatible LLM, or — with none
configured — the offline engine, which composes an answer from the recalled memories and says so."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from django.utils.translation import gettext as _

from memory.llm import (
    LLMBadOutput,
    LLMClient,
    LLMConfig,
    LLMError,
    LLMRejected,
    LLMStreamIncomplete,
    Role,
)

ENGINE_OFFLINE = "offline"
OFFLINE_NOTICE = "【离线引擎】未配置大模型，以下内容由系统根据已召回的记忆整理，并非模型生成。"
LAYER_ORDER = ("case", "user_profile", "cross_case", "general_law", "global", "conversation")
LAYER_HEADINGS = {
    "case": "当前案件事实",
    "user_profile": "您的偏好",
    "cross_case": "跨案经验",
    "general_law": "相关法律依据",
    "global": "本所办案流程",
    "conversation": "对话原文（您或助手之前说过的话）",
}


def llm_config() -> LLMConfig | None:
    return LLMConfig.from_settings(Role.CHAT)


def chat_client() -> LLMClient | None:
    """The chat role's client (shared JSON-mode memory, request gate, chat priority)."""
    return LLMClient.from_settings(Role.CHAT)


def describe_llm_error(error: LLMError) -> str:
    """What the user is told when the model fails: translated, without server addresses or
    internals (those go to the ``legalmem.chat`` log)."""
    if isinstance(error, LLMStreamIncomplete):
        return _("The language model stopped before finishing the answer; the partial answer is kept. Please ask again.")
    if isinstance(error, LLMRejected):
        return _("The language model server refused the request. Please ask an administrator to check the LLM settings.")
    if isinstance(error, LLMBadOutput):
        return _("The language model returned an unusable answer. Please try again.")
    return _("The language model is not reachable or too busy right now. Please try again later.")


def engine_name(config: LLMConfig | None) -> str:
    return f"llm:{config.model}" if config else ENGINE_OFFLINE


def compose_offline_answer(question: str, recalled: list[dict[str, Any]], warning: str = "") -> str:
    """An honest answer built only from what memory holds, grouped by layer."""
    lines = [OFFLINE_NOTICE, ""]
    if warning:
        lines += [warning, ""]
    if not recalled:
        lines.append("目前的记忆中没有与这个问题相关的内容。请补充案件事实（时间、金额、证据），我会记住并在之后的回答中使用。")
        return "\n".join(lines)
    lines.append(f"关于“{question[:60]}”，记忆中有以下相关内容：")
    for layer in LAYER_ORDER:
        items = [r for r in recalled if r["layer"] == layer]
        if not items:
            continue
        lines += ["", f"{LAYER_HEADINGS[layer]}："]
        lines += [f"- {item['content']}" for item in items]
    lines += ["", "建议：先核对上述事实与证据是否完整，再决定协商、投诉或诉讼的路径。"]
    return "\n".join(lines)


async def offline_tokens(text: str, chunk: int = 4) -> AsyncIterator[str]:
    """Stream a composed answer in small pieces, yielding control between them so a cancel lands."""
    for start in range(0, len(text), chunk):
        yield text[start : start + chunk]
        await asyncio.sleep(0.01)


def answer_stream(
    client: LLMClient | None, llm_messages: list[dict[str, str]], *, question: str,
    recalled: list[dict[str, Any]], warning: str, max_tokens: int | None = None,
) -> AsyncIterator[str]:
    if client is None:
        return offline_tokens(compose_offline_answer(question, recalled, warning))
    return client.astream_chat(llm_messages, max_tokens=max_tokens)
