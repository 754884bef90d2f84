"""The retrieval plan: which memory layers a question needs, in which order, and how to search them.

Rules (docs/read-path.md, Plan):
- the current matter's case facts come first, then user profile, cross-case experience,
  general law and the firm's global procedures;
- a question about the user (我的偏好 / 我喜欢 / 我习惯 …) puts the persona layer
  (``user_profile``) first;
- the user's visible raw messages are always a candidate source (every turn is memory); an
  explicit reference to earlier talk (你之前说过 / 上次 / 刚才 …) weights them up;
- a history question (之前的 / 原来 / 以前 / previously / used to …) also reads superseded notes,
  shown with their validity window and ranked below the current value; a question for the first
  version given (最早 / 一开始 / 第一次说 / originally / "did I first give") ranks it above;
- time or causal words (之前 / 之后 / 为什么 / 导致 / 因为 / 时间线 / 先后 …) switch on
  graph expansion over typed note links.

The plan is pure (no database access) and is returned with every search result.
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from memory.models import MemoryScope

# Current matter first, then user profile, cross-case, general law, global.
DEFAULT_LAYER_ORDER: tuple[str, ...] = (
    MemoryScope.CASE,
    MemoryScope.USER_PROFILE,
    MemoryScope.CROSS_CASE,
    MemoryScope.GENERAL_LAW,
    MemoryScope.GLOBAL,
)

EXPLICIT_REFERENCE_CUES: tuple[str, ...] = (
    "你之前说过", "你之前说", "你说过", "之前说过", "之前提到", "之前聊", "我之前说", "我说过",
    "我提到过", "上次", "上回", "刚才", "刚刚", "前面说", "前面提到", "那次", "你提到过",
    "you said", "earlier you", "last time",
)
TEMPORAL_CAUSAL_CUES: tuple[str, ...] = (
    "之前", "之后", "以后", "以前", "为什么", "为何", "导致", "因为", "所以", "原因", "结果",
    "时间线", "先后", "顺序", "后来", "接着", "然后", "起因", "经过", "什么时候", "何时",
    "多久", "why", "because", "timeline", "before", "after",
)
HISTORY_CUES: tuple[str, ...] = (
    "之前的", "之前是", "原来", "原先", "以前", "过去", "曾经", "当初", "变更前", "修改前", "改之前", "调整前",
    "历史", "旧的", "previously", "used to", "before", "formerly", "originally", "earlier", "in the past",
    "old value", "history",
)
# A question for the FIRST version someone gave ("我最早报给你的定金", "the date I first gave
# you"): the earlier statement is the answer itself, so it ranks right above the later one, not
# below it. Narrower than the history cues: "之前" / "before" also ask for the current value.
FIRST_VERSION_CUES: tuple[str, ...] = (
    "最早", "一开始", "最初", "最开始", "起初", "起先", "头一回", "头一次", "第一次报", "第一次说",
    "第一次跟你说", "第一次告诉", "第一次给", "刚来时", "刚来的时候",
)
FIRST_VERSION_PATTERN = re.compile(  # English, as words: "did I first give", "the first one I told you"
    r"\b(?:originally|initially|at first|before i (?:corrected|changed))\b"
    r"|\bfirst\b(?:\s+\w+){0,2}?\s+(?:said|say|told|tell|gave|give|given|reported|report|mentioned|mention|quoted|quote)\b"
)
# The value before a change the question names ("涨租之前", "更正之前记的", "改期前", "调价以前"):
# the earlier statement is the answer, as for the first version.
BEFORE_A_CHANGE_PATTERN = re.compile(
    r"(?:涨|降|加价|减|改|换|调价|调薪|调租|调整|更正|变更|修改|延期|延长)[\u4e00-\u9fff]{0,3}?(?:之前|以前|前)"
    r"(?![一二三四五六七八九十两几\d]+个?[天日周月年])"
)
PERSONA_CUES: tuple[str, ...] = (
    "我的偏好", "我偏好", "我喜欢", "我习惯", "我的习惯", "我一般", "我通常", "我希望", "我倾向",
    "我更", "我讨厌", "我不喜欢", "我的风格", "我是什么样", "了解我", "我的要求", "关于我",
    "my preference", "i prefer", "i like",
)

# Per-layer share of k (see ``RetrievalPlan.quota``): the first layer may fill k,
# later layers are capped so one layer cannot crowd out the rest.
FIRST_LAYER_SHARE = 1.0
OTHER_LAYER_SHARE = 0.4
# Layer priority as a small multiplier on the fused score: 1.0, 0.97, 0.94, … (ties go to earlier layers).
LAYER_PRIORITY_STEP = 0.03
# The raw messages ("what was said") compete with the notes at the second layer's priority, or
# the first's when the question refers to earlier talk.
MESSAGES = "conversation"


@dataclass(frozen=True)
class RetrievalPlan:
    """What a search will do, and why (``reasons``)."""

    layers: tuple[str, ...]
    matter_id: int | None
    conversation_id: int | None
    persona_first: bool
    search_messages: bool  # an explicit reference to earlier talk (messages are searched anyway)
    graph_expansion: bool
    history: bool = False  # superseded notes answer too
    first_version: bool = False  # the first version given is the answer: earlier statements rank above
    cues: dict[str, list[str]] = field(default_factory=dict)
    reasons: tuple[str, ...] = ()

    def layer_weight(self, layer: str) -> float:
        """Priority multiplier of a layer: 1.0 for the first, minus 0.03 per position after it."""
        try:
            position = self.layers.index(layer)
        except ValueError:
            return 0.0
        return round(1.0 - LAYER_PRIORITY_STEP * position, 4)

    def message_weight(self, conversation_id: int | None) -> float:
        """Priority of a raw message: the first layer's with an explicit reference to earlier
        talk (for the referenced conversation, or any when none is given), else the second's."""
        referenced = self.search_messages and self.conversation_id in (None, conversation_id)
        return 1.0 if referenced else round(1.0 - LAYER_PRIORITY_STEP, 4)

    def quota(self, layer: str, k: int) -> int:
        """At most this many of the k hits may come from ``layer`` (before back-filling)."""
        share = FIRST_LAYER_SHARE if self.layers and self.layers[0] == layer else OTHER_LAYER_SHARE
        return max(1, int(round(k * share)))

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["layers"] = list(self.layers)
        data["reasons"] = list(self.reasons)
        data["layer_weights"] = {layer: self.layer_weight(layer) for layer in self.layers}
        return data


def _found(question: str, cues: Iterable[str]) -> list[str]:
    lowered = question.lower()
    return [cue for cue in cues if cue in lowered]


def make_plan(
    question: str,
    *,
    matter_id: int | None = None,
    conversation_id: int | None = None,
    scopes: Iterable[str] | None = None,
) -> RetrievalPlan:
    """The plan for ``question``; ``scopes`` (validated by the caller) restricts the layers."""
    explicit = _found(question, EXPLICIT_REFERENCE_CUES)
    temporal = _found(question, TEMPORAL_CAUSAL_CUES)
    persona = _found(question, PERSONA_CUES)
    first_version = (_found(question, FIRST_VERSION_CUES) + FIRST_VERSION_PATTERN.findall(question.lower())
                     + BEFORE_A_CHANGE_PATTERN.findall(question))
    history = _found(question, HISTORY_CUES) + first_version
    order = list(DEFAULT_LAYER_ORDER)
    reasons: list[str] = []
    if matter_id is not None:
        reasons.append(f"当前案件 matter {matter_id} 的事实优先 (case layer restricted to this matter)")
    else:
        reasons.append("无当前案件：案件层覆盖所有可见案件 (case layer over every visible matter)")
    if persona:
        order.remove(MemoryScope.USER_PROFILE)
        order.insert(0, MemoryScope.USER_PROFILE)
        reasons.append(f"问题涉及用户本人 ({'、'.join(persona)}) → 先查用户画像 persona first")
    if scopes is not None:
        wanted = set(scopes)
        order = [layer for layer in order if layer in wanted]
        reasons.append(f"scope filter: {', '.join(order) or '(none)'}")
    reasons.append("对话原文始终参与检索 every visible message is a candidate")
    if explicit:
        reasons.append(f"显式指代 ({'、'.join(explicit)}) → 对话原文加权 archived messages weighted up")
    if history:
        reasons.append(f"历史问题 ({'、'.join(history)}) → 含已被取代的旧版本 superseded notes with their validity window")
    if first_version:
        reasons.append("问最初的说法 → 被更正的旧版本排在更正之上 a corrected note ranks above its correction")
    if temporal:
        reasons.append(f"时间/因果词 ({'、'.join(temporal)}) → 启用图扩展 graph expansion")
    return RetrievalPlan(
        layers=tuple(str(layer) for layer in order),
        matter_id=matter_id,
        conversation_id=conversation_id,
        persona_first=bool(persona),
        search_messages=bool(explicit),
        graph_expansion=bool(temporal),
        history=bool(history),
        first_version=bool(first_version),
        cues={"explicit_reference": explicit, "temporal_causal": temporal, "persona": persona, "history": history},
        reasons=tuple(reasons),
    )
