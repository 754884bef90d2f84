"""Notes of every layer for the "my memory" and admin tests, one per visibility case."""
from __future__ import annotations

import pytest

from memory.models import Conversation, MemoryScope, Note
from memory.services.conversations import save_message


@pytest.fixture
def memory_notes(world) -> dict[str, Note]:
    """The laptop note comes from a turn of alice's own conversation (its source messages)."""
    w = world
    conversation = Conversation.objects.create(
        firm=w.firm_a, user=w.alice, matter=w.matter_laptop, title="电脑花屏"
    )
    question = save_message(conversation, "user", "我的笔记本买了两周就大面积花屏了。", speaker="alice")
    reply = save_message(conversation, "assistant", "建议先做官方检测，保留检测报告。", speaker="assistant")
    return {
        "laptop": w.note("笔记本电脑在购买后约两周出现大面积花屏。", matter=w.matter_laptop,
                         conversation=conversation, source_message_ids=[question.pk, reply.pk],
                         speaker="alice"),
        "deposit": w.note("租客已支付押金五千元，房东拒绝退还。", matter=w.matter_deposit),
        "secret": w.note("并购目标的估值为两亿元。", matter=w.matter_secret),
        "law": w.note("消费者可就质量问题主张退换修。", scope=MemoryScope.GENERAL_LAW, category="law"),
        "alice_profile": w.note("alice 偏好先列出证据清单再写结论。", scope=MemoryScope.USER_PROFILE,
                                owner=w.alice, category="preference"),
        "bob_profile": w.note("bob 偏好低成本维权。", scope=MemoryScope.USER_PROFILE, owner=w.bob,
                              category="preference"),
        "beta": w.note("Beta 客户的机密事实。", firm=w.firm_b, matter=w.matter_b),
    }
