"""Where an answer's tokens come from: the configured OpenAI-compatible LLM, or — with none
configured — the offline engine, which composes an answer from the recalled memories and says so."""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from django.utils.translation import gettext as _

from chat.citations import source_text
from chat.support import bears_on
from legaltext.acts import tells
from memory.segmentation import shorten
from remember.extract import OFFLINE_ANSWER_ENGINE
from infra.llm import (
    LLMBadOutput,
    LLMClient,
    LLMConfig,
    LLMError,
    LLMRejected,
    LLMStreamIncomplete,
    Role,
)

ENGINE_OFFLINE = OFFLINE_ANSWER_ENGINE  # the write path reads nothing new from these answers
#: The offline answer quotes the question up to this many characters (cut at a clause or word).
QUOTED_QUESTION_CHARS = 60
LAYER_ORDER = ("case", "document", "user_profile", "cross_case", "general_law", "global", "conversation")


def layer_heading(layer: str) -> str:
    """The offline answer's heading of a layer other than ``case`` (see :func:`case_heading`)."""
    return {
        "user_profile": _("您的偏好"),
        "cross_case": _("跨案经验"),
        "general_law": _("相关法律依据"),
        "global": _("本所办案流程"),
        "conversation": _("对话原文（您或助手之前说过的话）"),
        "document": _("案件文件原文（出处见各条开头）"),
    }.get(layer, layer)


def case_heading(matter_id: int | None, reference: str | None, title: str | None, current_matter_id: int | None) -> str:
    """Case facts are "the current matter's" only when they belong to the conversation's matter;
    facts of another matter (or, with no matter selected, of any matter) are named by it."""
    if matter_id is None:
        return _("您的案件笔记（未归入案件）")
    if matter_id == current_matter_id:
        return _("当前案件事实")
    name = " ".join(part for part in (reference, title) if part)
    if current_matter_id is None:
        return _("案件事实：%(matter)s") % {"matter": name}
    return _("其他案件的事实：%(matter)s") % {"matter": name}


def _groups(recalled: list[dict[str, Any]], current_matter_id: int | None) -> list[tuple[str, list[dict[str, Any]]]]:
    """Recalled items by layer in answer order; case notes further by matter, the current one first."""
    groups: list[tuple[str, list[dict[str, Any]]]] = []
    for layer in LAYER_ORDER:
        items = [r for r in recalled if r["layer"] == layer]
        if not items:
            continue
        if layer != "case":
            groups.append((layer_heading(layer), items))
            continue
        matters: dict[int | None, list[dict[str, Any]]] = {}
        for item in items:
            matters.setdefault(item.get("matter_id"), []).append(item)
        for matter_id in sorted(matters, key=lambda pk: (pk != current_matter_id, pk is None, pk or 0)):
            first = matters[matter_id][0]
            heading = case_heading(matter_id, first.get("matter_reference"), first.get("matter"), current_matter_id)
            groups.append((heading, matters[matter_id]))
    return groups


def _item_line(item: dict[str, Any]) -> str:
    """An item's answer line, ending with its source marker when it is numbered: the offline
    answer cites what it lists by construction (docs/citations.md)."""
    number = item.get("number")
    return f"- {item['content']}" + (f" [{number}]" if number else "")


def _listed(recalled: list[dict[str, Any]], current_matter_id: int | None) -> list[str]:
    """The recalled items as answer lines: a heading per group (``_groups``), an item per line."""
    lines: list[str] = []
    for heading, items in _groups(recalled, current_matter_id):
        lines += ["", _("%(heading)s：") % {"heading": heading}, *(_item_line(item) for item in items)]
    return lines


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


#: ``Message.engine`` of an answer the configured LLM wrote: "llm:<model>".
LLM_ENGINE_PREFIX = "llm:"


def engine_name(config: LLMConfig | None) -> str:
    return f"{LLM_ENGINE_PREFIX}{config.model}" if config else ENGINE_OFFLINE


def compose_offline_answer(
    question: str, recalled: list[dict[str, Any]], warning: str = "", *, current_matter_id: int | None = None,
    nothing_on: list[str] | None = None,
) -> str:
    """An honest answer built only from what memory holds, grouped by layer (and case facts by
    matter, so a heading never claims notes of another matter for the current one). A message
    that tells rather than asks (``legaltext.acts.tells``) is acknowledged, its related memories
    listed."""
    lines = [_("【离线引擎】未配置大模型，以下内容由系统根据已召回的记忆整理，并非模型生成。"), ""]
    if warning:
        lines += [warning, ""]
    if nothing_on:
        names = "、".join(f"“{name}”" for name in nothing_on)
        lines.append(_("记忆中没有任何提到%(names)s的内容，无法据此回答。如果这是新的情况，请补充事实（时间、金额、证据），我会记住。")
                     % {"names": names})
        return "\n".join(lines)
    if tells(question):  # "中介叫王磊，电话…。" is told, not asked: acknowledged, never "nothing on 王磊"
        lines.append(_("已记下：“%(said)s”。") % {"said": shorten(question, QUOTED_QUESTION_CHARS)})
        if recalled:
            lines += ["", _("记忆中与此相关的内容："), *_listed(recalled, current_matter_id)]
        return "\n".join(lines)
    if not recalled:
        lines.append(_("目前的记忆中没有与这个问题相关的内容。请补充案件事实（时间、金额、证据），我会记住并在之后的回答中使用。"))
        return "\n".join(lines)
    quoted = shorten(question, QUOTED_QUESTION_CHARS)
    if any(bears_on(question, source_text(item)) for item in recalled):
        lines.append(_("关于“%(question)s”，记忆中有以下相关内容：") % {"question": quoted})
    else:  # weak matches only: said at the answer, and listed as what they are
        lines.append(_("关于“%(question)s”，记忆中没有这方面的记录。以下召回内容与问题关联较弱，仅供参考：")
                     % {"question": quoted})
    lines += _listed(recalled, current_matter_id)
    lines += ["", _("通用建议（并非来自记忆）：先核对上述事实与证据是否完整，再决定协商、投诉或诉讼的路径。")]
    return "\n".join(lines)


async def offline_tokens(text: str, chunk: int = 4) -> AsyncIterator[str]:
    """Stream a composed answer in small pieces, yielding control between them so a cancel lands."""
    for start in range(0, len(text), chunk):
        yield text[start : start + chunk]
        await asyncio.sleep(0.01)


def answer_stream(
    client: LLMClient | None, llm_messages: list[dict[str, str]], *, question: str,
    recalled: list[dict[str, Any]], warning: str, max_tokens: int | None = None,
    current_matter_id: int | None = None, nothing_on: list[str] | None = None,
) -> AsyncIterator[str]:
    if client is None:
        return offline_tokens(
            compose_offline_answer(question, recalled, warning, current_matter_id=current_matter_id,
                                   nothing_on=nothing_on)
        )
    return client.astream_chat(llm_messages, max_tokens=max_tokens)
