"""Candidates for the LLM-worded routing pairs (``evaluation/routing_pairs_llm.json``):
a real local model rewrites what a client said as the stored statements an extractor writes.

Not in CI and not run by the product: it only *generates candidates*; every pair in the
labelled file was read and labelled by hand afterwards (docs/routing.md, "LLM-worded pairs").

Each seed is a stored note (``old``) and a client's later turn (``said``). The seeds were
written for this project: true corrections of the slot the note fills ("更正：月租金是8500元，
不是8000元", "I misspoke — the rent is $1,200") and look-alikes that must not supersede it (a
correction of another slot, another instalment, another person's value, another event). The
model sees only the turn, as the extractor does, and is asked for three differently worded
self-contained statements of what the client now says; each becomes a candidate pair
``(old, candidate)`` with ``said`` kept beside it. The split is fixed per seed before any run
(seeds alternate dev / test within each group), so a seed's paraphrases never cross it.

Run (against the llama.cpp server of docs/story-and-real-llm.md; no database needed):

    LLM_BASE_URL=http://127.0.0.1:8088/v1 LLM_MODEL=qwen-local \\
    /work/main/.venv/bin/python bench/paraphrase_corrections.py var/paraphrase_candidates.json
"""
from __future__ import annotations

import json
import os
import sys
import time
import urllib.request
from pathlib import Path

# (group, old, said): groups "zh-update" / "en-update" are corrections of the note's slot,
# "zh-keep" / "en-keep" turns that must not supersede it. Labels are given per candidate later.
SEEDS: list[tuple[str, str, str]] = [
    ("zh-update", "王磊租住的房屋月租金为8000元。", "更正：月租金是8500元，不是8000元。"),
    ("zh-update", "李娜已经向房东支付押金5000元。", "我刚才说错了，押金其实是6000元。"),
    ("zh-update", "张伟每月工资为12000元。", "不是12000，我的月薪是15000元。"),
    ("zh-update", "合同约定的违约金为2万元。", "纠正一下，违约金是3万元，不是2万。"),
    ("zh-update", "开庭时间定于2026年3月15日。", "开庭日期记错了，应该是2026年3月18日。"),
    ("zh-update", "陈先生的住址是北京市朝阳区建国路88号。", "更正一下地址，我现在住在北京市海淀区中关村大街27号。"),
    ("zh-update", "借款金额为50000元。", "其实当时借给他的是45000元，不是五万。"),
    ("zh-update", "房屋面积为89平方米。", "我看错了，房产证上面积是92平方米。"),
    ("zh-update", "赵敏的加班费每月约为3000元。", "不是3000，加班费每个月是3600元。"),
    ("zh-update", "装修尾款为18000元。", "更正：尾款应该是16500元。"),
    ("zh-update", "租期为24个月。", "准确地说，租期是36个月。"),
    ("zh-update", "刘强支付的定金为1万元。", "定金我记错了，是8000元。"),
    ("zh-update", "孙丽的律师费为15000元。", "律师费说错了，实际是12000元。"),
    ("zh-update", "公司拖欠王芳工资共计36000元。", "更正一下，拖欠的工资总共是42000元，不是36000元。"),
    ("zh-update", "维修费为2800元。", "修理费其实是3200元，我之前记错了。"),
    ("zh-update", "每天工作时间为10小时。", "不对，每天工作其实是12个小时。"),
    ("en-update", "The monthly rent is $1,000.", "I misspoke earlier — the rent is $1,200 a month, not $1,000."),
    ("en-update", "Mary Jones paid a security deposit of $2,500.", "Correction: the security deposit was $2,800."),
    ("en-update", "The hearing is scheduled for March 10, 2026.", "Sorry, I meant the hearing is on March 17, 2026."),
    ("en-update", "John's annual salary is $85,000.", "I got that wrong, my salary is $92,000 a year."),
    ("en-update", "The contractor's final payment is $4,000.", "Actually the final payment due is $4,600."),
    ("en-update", "The client lives at 12 Oak Street, Springfield.", "I meant to say my address is 48 Pine Avenue, Springfield."),
    ("en-update", "The loan amount was $15,000.", "Let me correct that: I lent him $12,500, not $15,000."),
    ("en-update", "The late fee penalty is 5% of the rent.", "I misspoke, the penalty is 8% of the rent."),
    ("zh-keep", "王磊租住的房屋月租金为8000元。", "另外押金其实是16000元。"),
    ("zh-keep", "第一期租金8000元已于1月5日支付。", "更正：第二期租金是8500元，2月5日付的。"),
    ("zh-keep", "张伟每月工资为12000元。", "我同事李明的工资其实是15000元。"),
    ("zh-keep", "李娜已经向房东支付押金5000元。", "房东说押金要退4000元给我。"),
    ("zh-keep", "开庭时间定于2026年3月15日。", "对方提交证据的截止日期是3月10日。"),
    ("zh-keep", "借款金额为50000元，借款人是赵刚。", "其实赵刚后来又借了2万元。"),
    ("zh-keep", "合同约定的违约金为2万元。", "实际上我们的损失有5万元。"),
    ("zh-keep", "装修尾款为18000元。", "不是我不想付尾款，是他们没完工。"),
    ("zh-keep", "孙丽的律师费为15000元。", "其实对方的律师费是20000元。"),
    ("zh-keep", "赵敏的加班费每月约为3000元。", "更正：上个月加班了60个小时。"),
    ("en-keep", "The monthly rent is $1,000.", "Actually, the security deposit was $2,000."),
    ("en-keep", "The first instalment of $500 was paid on January 5.", "Correction: the second instalment was $700, paid February 5."),
    ("en-keep", "John's annual salary is $85,000.", "I meant that my wife's salary is $60,000."),
    ("en-keep", "The hearing is scheduled for March 10, 2026.", "Sorry, the mediation session is on March 3, 2026."),
    ("en-keep", "The loan amount was $15,000.", "Actually he already repaid $5,000 of it."),
    ("en-keep", "Mary Jones paid a security deposit of $2,500.", "I misspoke: the pet deposit was $300."),
]

PROMPTS = {
    "zh": ("客户在法律咨询中说：「{said}」\n请像记忆系统的知识抽取器那样，把客户这句话所说的最新事实写成3条可以单独存档的完整陈述句，"
           "每条措辞不同，保留金额、日期和人名。只输出JSON：{{\"items\": [\"…\", \"…\", \"…\"]}}"),
    "en": ("In a legal consultation the client said: \"{said}\"\nAs a memory system's knowledge extractor would, write the "
           "latest fact the client states as 3 self-contained statements, each worded differently, keeping amounts, "
           "dates and names. Reply with JSON only: {{\"items\": [\"...\", \"...\", \"...\"]}}"),
}


def split_of(seeds: list[tuple[str, str, str]]) -> list[str]:
    """dev / test per seed, alternating within each group (fixed before any run)."""
    seen: dict[str, int] = {}
    splits = []
    for group, _, _ in seeds:
        splits.append("dev" if seen.get(group, 0) % 2 == 0 else "test")
        seen[group] = seen.get(group, 0) + 1
    return splits


def generation_order(seeds: list[tuple[str, str, str]]) -> list[int]:
    """Seed indexes with the groups interleaved, so that a run stopped early (a slow shared
    CPU) still holds corrections and look-alikes of both languages."""
    by_group: dict[str, list[int]] = {}
    for index, (group, _, _) in enumerate(seeds):
        by_group.setdefault(group, []).append(index)
    order = []
    while any(by_group.values()):
        for queue in by_group.values():
            if queue:
                order.append(queue.pop(0))
    return order


def ask(base_url: str, model: str, prompt: str) -> tuple[list[str], float]:
    """One json_object request (not streamed: this script never gives up on a request)."""
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": prompt}], "max_tokens": 160,
                       "temperature": 0.7, "response_format": {"type": "json_object"}}).encode()
    request = urllib.request.Request(f"{base_url.rstrip('/')}/chat/completions", data=body,
                                     headers={"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=1800) as response:
        reply = json.loads(response.read())["choices"][0]["message"]["content"]
    seconds = time.perf_counter() - started
    try:
        parsed = json.loads(reply)
    except ValueError:
        print(f"    not JSON: {reply[:300]!r}", flush=True)
        return [], seconds
    # a small model names the list as it likes ({"statements": […]}, {"items": [{"content": …}]})
    lists = [v for v in (parsed.values() if isinstance(parsed, dict) else [parsed]) if isinstance(v, list)]
    items = [i.get("content") or next(iter(i.values()), "") if isinstance(i, dict) else i
             for i in (lists[0] if lists else [])]
    if not items:
        print(f"    no list: {reply[:300]!r}", flush=True)
    return [str(item).strip() for item in items if isinstance(item, str) and item.strip()], seconds


def main(out: str) -> None:
    base_url, model = os.environ["LLM_BASE_URL"], os.environ.get("LLM_MODEL", "qwen-local")
    candidates = []
    splits = split_of(SEEDS)
    for index in generation_order(SEEDS):
        (group, old, said), split = SEEDS[index], splits[index]
        lang = group[:2]
        items, seconds = ask(base_url, model, PROMPTS[lang].format(said=said))
        print(f"[seed {index}] {group} {split} {seconds:.1f}s: {items}", flush=True)
        for number, item in enumerate(items[:3]):
            candidates.append({"seed": index, "group": group, "split": split, "lang": lang, "old": old,
                               "said": said, "new": item, "variant": number})
        Path(out).write_text(json.dumps(candidates, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(candidates)} candidates → {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "var/paraphrase_candidates.json")
