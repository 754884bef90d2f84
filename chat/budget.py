"""Fitting a chat prompt into the model's context window.

A small local model has a few thousand tokens of context (llama.cpp ``--n_ctx 4096``);
20 messages of history alone can take 2.5k. The prompt is cut to leave room for the
answer (``LLM_ANSWER_MAX_TOKENS``) inside ``LLM_CONTEXT_TOKENS``: the history loses its
oldest messages and the recalled memory its lowest-ranked notes, whichever is larger
first, so neither crowds out the other. Tokens are estimated without a tokenizer (each
CJK character one token, other text one per four characters), which errs on the safe side.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from recall import SearchResult, build_system_message
from infra.tokens import estimate_tokens

#: What the chat template adds around each message (role markers, separators).
MESSAGE_OVERHEAD_TOKENS = 8
#: Kept free beyond the answer: the estimate is close, not exact.
SAFETY_MARGIN_TOKENS = 64
#: The shortest answer worth asking for; below it the question itself is too long.
MIN_ANSWER_TOKENS = 128


class PromptTooLong(Exception):
    """Even with no history and no memory, the question leaves no room for an answer."""


@dataclass
class FittedPrompt:
    """The parts of a chat prompt that fit, and the answer budget left for the model."""

    memory_message: dict[str, str] | None
    history: list[dict[str, str]]
    result: SearchResult | None
    answer_tokens: int
    prompt_tokens: int


def message_tokens(message: dict[str, str] | None) -> int:
    return 0 if message is None else estimate_tokens(message["content"]) + MESSAGE_OVERHEAD_TOKENS


def _memory_for(result: SearchResult | None, keep: int) -> tuple[SearchResult | None, dict[str, str] | None]:
    if result is None:
        return None, None
    ranked = sorted(result.hits, key=lambda hit: hit.rank)[:keep]
    trimmed = dataclasses.replace(result, hits=ranked)
    return trimmed, build_system_message(trimmed, token_budget=10**9, numbered=True) if ranked else None


def fit_prompt(
    *, system: str, question: str, history: list[dict[str, str]], result: SearchResult | None,
    context_tokens: int, answer_tokens: int,
) -> FittedPrompt:
    """Trim ``history`` (oldest first) and ``result``'s hits (lowest rank first) until the
    prompt plus ``answer_tokens`` fits ``context_tokens``. A question too long for even a
    short answer raises :class:`PromptTooLong`."""
    fixed = message_tokens({"content": system}) + message_tokens({"content": question}) + SAFETY_MARGIN_TOKENS
    room_for_answer = context_tokens - fixed
    if room_for_answer < MIN_ANSWER_TOKENS:
        raise PromptTooLong(f"the question needs {fixed} of {context_tokens} context tokens")
    answer_tokens = min(answer_tokens, room_for_answer)
    room = context_tokens - fixed - answer_tokens
    history = list(history)
    keep = len(result.hits) if result is not None else 0
    trimmed, memory = _memory_for(result, keep)
    history_cost = sum(message_tokens(m) for m in history)
    memory_cost = message_tokens(memory)
    while history_cost + memory_cost > room:
        if history and (history_cost >= memory_cost or memory is None):
            history_cost -= message_tokens(history.pop(0))
        else:
            keep -= 1
            trimmed, memory = _memory_for(result, keep)
            memory_cost = message_tokens(memory)
    return FittedPrompt(
        memory_message=memory, history=history, result=trimmed, answer_tokens=answer_tokens,
        prompt_tokens=fixed - SAFETY_MARGIN_TOKENS + history_cost + memory_cost,
    )
