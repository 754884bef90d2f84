"""A small memory for retrieval tests, stored through the real service (embeddings included)."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import Category, Conversation, MemoryScope, Message
from memory.segmentation import search_text


@pytest.fixture
def memory(world):
    w = world
    n = {
        "laptop_screen": w.note("alice 购买的笔记本电脑在两周后出现大面积花屏。", matter=w.matter_laptop,
                                importance=0.8),
        "laptop_report": w.note("电脑花屏纠纷目前缺少第三方检测报告。", matter=w.matter_laptop,
                                category=Category.EVIDENCE, importance=0.9),
        "deposit_fact": w.note("房东以墙面污损为由扣留押金3000元。", matter=w.matter_deposit),
        "deposit_photos": w.note("退租时拍了交接照片，墙面没有明显污损。", matter=w.matter_deposit,
                                 category=Category.EVIDENCE),
        "secret_fact": w.note("并购目标公司的估值为两亿元，电脑花屏无关。", matter=w.matter_secret),
        "alice_profile": w.note("alice 希望先给结论，再列证据清单。", scope=MemoryScope.USER_PROFILE,
                                owner=w.alice, category=Category.PREFERENCE),
        "bob_profile": w.note("bob 偏好低成本维权，先协商再诉讼。", scope=MemoryScope.USER_PROFILE,
                              owner=w.bob, category=Category.PREFERENCE),
        "law": w.note("消费者可就电脑等商品的质量问题主张退货、更换或修理。", scope=MemoryScope.GENERAL_LAW,
                      category=Category.LAW),
        "cross": w.note("押金扣减案件中，交接照片的证明力很高。", scope=MemoryScope.CROSS_CASE),
        "procedure": w.note("办案流程：先固定事实，再补证据，再匹配法条。", scope=MemoryScope.GLOBAL),
        "beta_fact": w.note("Beta 客户的电脑花屏，检测报告已经出具。", firm=w.firm_b, matter=w.matter_b),
        "beta_law": w.note("Beta 内部：电脑质量问题七日内可无理由退货。", firm=w.firm_b,
                           scope=MemoryScope.GENERAL_LAW, category=Category.LAW),
    }
    return n


@pytest.fixture
def laptop_conversation(world):
    """alice's conversation on the laptop matter with two archived messages."""
    conversation = Conversation.objects.create(
        firm=world.firm_a, user=world.alice, matter=world.matter_laptop, title="电脑花屏"
    )
    now = timezone.now()
    messages = [
        Message.objects.create(conversation=conversation, firm=world.firm_a, role=role, speaker=speaker,
                               content=text, said_at=now - timedelta(minutes=10 - i),
                               search_text=search_text(text))
        for i, (role, speaker, text) in enumerate([
            ("user", "alice", "商家说花屏是人为损坏，不给退货。"),
            ("assistant", "assistant", "建议尽快去官方售后做检测，保留检测报告和聊天记录。"),
        ])
    ]
    return conversation, messages
