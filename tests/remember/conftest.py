"""Fixtures for the write path: conversations of the named users, a turn helper, LLM settings
pointing at the fake OpenAI-compatible server."""
from __future__ import annotations

import pytest

from memory.models import Message, TurnExtraction
from remember.turns import enqueue_turn_extraction, process_turn
from memory.services.conversations import save_message
from tests.remember.factories import ConversationFactory, at

LAPTOP_USER = "我在2024年3月5日花5999元买了一台笔记本电脑，笔记本电脑在购买后约两周出现大面积花屏。"
LAPTOP_REPLY = ("根据《消费者权益保护法》第二十四条，经营者提供的商品不符合质量要求的，消费者可以要求退货。"
                "建议先保存好购买凭证和故障照片，再与商家协商。")


@pytest.fixture
def laptop_conversation(world):
    """alice's conversation about matter_laptop (bob is on the matter too)."""
    return ConversationFactory(user=world.alice, firm=world.firm_a, matter=world.matter_laptop, title="电脑花屏")


@pytest.fixture
def private_conversation(world):
    """bob's conversation without a matter: case notes from it are private to bob."""
    return ConversationFactory(user=world.bob, firm=world.firm_a, matter=None, title="私人咨询")


class TurnMaker:
    """Save a user message and a reply, create the turn job, optionally run it now."""

    def __init__(self) -> None:
        self.minute = 0

    def save(self, conversation, user_text: str, reply_text: str, *, day: int = 1) -> tuple[Message, Message]:
        self.minute += 2
        user = save_message(conversation, "user", user_text, speaker=conversation.user.username,
                            said_at=at(day, 10, self.minute % 60))
        reply = save_message(conversation, "assistant", reply_text, speaker="assistant",
                             said_at=at(day, 10, (self.minute + 1) % 60))
        return user, reply

    def __call__(self, conversation, user_text: str, reply_text: str = "", *, day: int = 1, run: bool = True) -> TurnExtraction:
        user, reply = self.save(conversation, user_text, reply_text, day=day)
        turn = enqueue_turn_extraction(user, reply)
        return process_turn(turn.pk) if run else turn


@pytest.fixture
def make_turn() -> TurnMaker:
    return TurnMaker()


@pytest.fixture
def llm_settings(llm_online, settings) -> None:
    """Point the pipeline at the fake LLM server (short timeout, one client retry)."""
    settings.LLM_TIMEOUT_SECONDS = 1.0
    settings.LLM_MAX_RETRIES = 1
