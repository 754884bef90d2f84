"""A deterministic synthetic corpus of Chinese legal notes for navigation tests and the benchmark."""
from __future__ import annotations

import random

PEOPLE = ["张三", "李四", "王五", "赵六", "陈晨", "刘洋", "周敏", "吴磊", "郑琳", "孙浩", "钱芳", "何静"]
EVENTS = [
    ("电脑花屏", "笔记本电脑购买后屏幕出现花屏", ["电脑", "花屏", "退货", "质量问题"]),
    ("租房押金", "租赁合同到期后房东拒绝退还押金", ["押金", "租房", "房东", "退还"]),
    ("课程退款", "培训机构拒绝退还未上课时的课程费用", ["课程", "退款", "培训", "预付款"]),
    ("加班费", "公司长期安排加班却不支付加班费", ["加班", "工资", "劳动", "仲裁"]),
    ("维修费", "手机维修后再次损坏要求商家承担维修费", ["维修", "手机", "费用", "商家"]),
    ("工伤认定", "员工在上班途中受伤申请工伤认定", ["工伤", "认定", "社保", "赔偿"]),
    ("民间借贷", "朋友借款到期未还且无书面借条", ["借款", "借条", "转账", "利息"]),
    ("交通事故", "电动车与汽车相撞后责任划分有争议", ["交通", "事故", "责任", "保险"]),
    ("网购欺诈", "网购商品与描述严重不符商家拒绝退款", ["网购", "欺诈", "退一赔三", "平台"]),
    ("物业纠纷", "物业公司未尽维修义务业主拒交物业费", ["物业", "物业费", "业主", "维修"]),
]
ACTIONS = [
    "已保留{thing}的聊天记录和付款凭证",
    "对方在{month}月{day}日明确拒绝了{thing}相关请求",
    "建议先发送律师函并要求在七日内答复{thing}问题",
    "{person}希望通过调解解决{thing}争议，不想起诉",
    "涉及金额约{amount}元，{person}已提供转账截图",
    "{person}于{month}月{day}日向消费者协会投诉了{thing}",
    "证据包括合同原件、发票和{thing}的照片",
    "根据法律规定，{thing}案件的诉讼时效为三年",
    "{person}担心起诉费用过高，询问{thing}的维权成本",
    "{person}表示{thing}事件给生活造成了严重影响",
]


def sentences(count: int, seed: int = 7) -> list[tuple[str, str, list[str]]]:
    """``count`` distinct (content, event name, keywords) triples, the same for the same seed."""
    rng = random.Random(seed)
    out: list[tuple[str, str, list[str]]] = []
    seen: set[str] = set()
    while len(out) < count:
        event, summary, keywords = rng.choice(EVENTS)
        person = rng.choice(PEOPLE)
        action = rng.choice(ACTIONS).format(
            thing=event, person=person, month=rng.randint(1, 12), day=rng.randint(1, 28),
            amount=rng.randint(3, 900) * 100,
        )
        text = f"{person}：{summary}。{action}。"
        if text in seen:
            continue
        seen.add(text)
        out.append((text, event, keywords))
    return out
