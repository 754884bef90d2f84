"""Synthetic Chinese consumer and tenancy conversations for the write-path benchmarks
(``bench_ingest``, ``bench_import``): one generator, so both measure the same kind of text."""
from __future__ import annotations

import random
from collections.abc import Callable

from memory.services.tenancy import assign_user, create_matter

ITEMS = ["笔记本电脑", "手机", "冰箱", "洗衣机", "电视机", "空调", "平板电脑", "相机"]
FAULTS = ["大面积花屏", "无法开机", "频繁死机", "电池鼓包", "异响", "漏水", "屏幕闪烁"]
EVIDENCE = ["电子发票", "付款截图", "故障照片", "客服录音", "聊天记录", "检测报告", "快递单"]
REASONS = ["可能存在人为损坏", "超过七天无理由期限", "包装已拆封", "需要先检测"]
CITIES = ["北京", "上海", "杭州", "成都", "武汉"]
LAWS = ["《消费者权益保护法》第二十四条", "《民法典》第五百七十七条", "《产品质量法》第四十条", "《民法典》第七百二十二条"]
ADVICE = ["先保存好购买凭证和故障照片，再与商家协商", "向消费者协会投诉", "申请第三方检测",
          "发律师函催告", "在诉讼时效内起诉", "与房东书面确认退还时间"]


def user_turn(rng: random.Random, i: int) -> str:
    kind = i % 4
    item, fault = rng.choice(ITEMS), rng.choice(FAULTS)
    if kind == 0:
        return (f"我在2025年{rng.randint(1, 12)}月{rng.randint(1, 28)}日花{rng.randint(500, 20000)}元买了一台{item}，"
                f"{item}在购买后约{rng.randint(1, 8)}周出现{fault}。")
    if kind == 1:
        a, b, c = rng.sample(EVIDENCE, 3)
        return f"我已经保存了{a}、{b}和{c}。"
    if kind == 2:
        return f"商家以{rng.choice(REASONS)}为由拒绝退换{item}，我在{rng.choice(CITIES)}购买的。"
    return f"房东拒绝退还{rng.randint(1, 9) * 1000}元押金，租期到{rng.randint(1, 12)}月底结束。"


def reply(rng: random.Random) -> str:
    return f"根据{rng.choice(LAWS)}，您可以要求对方承担责任。建议{rng.choice(ADVICE)}，必要时{rng.choice(ADVICE)}。"


def conversations_for(firm, user, turns: int, rng: random.Random,
                      reply_for: Callable[[random.Random], str] = reply) -> list[dict]:
    """``turns`` turns in conversations of ten, each on a new matter of ``firm`` assigned to
    ``user``, in the ``import_conversation`` format."""
    conversations = []
    for c in range(max(1, turns // 10)):
        matter = create_matter(firm=firm, title=f"案件 {c}", reference=f"B-{c:04d}", actor="system:bench")
        assign_user(matter=matter, user=user, actor="system:bench")
        messages = []
        for t in range(10):
            messages.append({"id": f"u{t}", "role": "user", "speaker": user.username,
                             "timestamp": f"2026-03-01T10:{t:02d}:00+08:00", "content": user_turn(rng, c * 10 + t)})
            messages.append({"id": f"a{t}", "role": "assistant", "speaker": "assistant",
                             "timestamp": f"2026-03-01T10:{t:02d}:30+08:00", "content": reply_for(rng)})
        conversations.append({"id": f"conv-{c}", "user": user.username, "matter": matter.reference, "messages": messages})
    return conversations
