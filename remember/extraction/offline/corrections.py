"""A typed correction as the statement it makes: "刚才说错了，押金是3000不是2000。" is the
client saying the deposit is 3000元, which must replace the stored 2000 (issue 50).

Left as typed, the sentence has no amount the routing can read (a bare "3000" after 押金 is
no quantity, "不是2000" without its comma no rejected value), so it became a separate
"alice说：刚才说错了…" note and the 2000 note stayed current. Written as
"更正：押金是3000元，不是2000元。" it keeps the correction's cue and both values, and the
routing's slot rules (``remember.routing.slots``) supersede the stored value with it.
"""
from __future__ import annotations

import re

from memory.corrections import CORRECTION_CUE_RE, says_it_corrects

#: Slot words whose bare number is an amount of money in 元 ("押金是3000" = 3000元).
MONEY_SLOT = r"押金|保证金|定金|订金|租金|房租|月租|月薪|工资|薪水|底薪|奖金|补偿金|赔偿金|违约金|首付|尾款|价款|报价|货款|欠款|借款|医疗费|加班费"
#: "押金是3000" / "押金3000" / "押金应该是3000": the slot, its verb, a bare number.
_SLOT_VALUE_RE = re.compile(rf"((?:{MONEY_SLOT})(?:其实|实际上|应该|应当)?(?:是|为|：|:)?\s*)(\d+(?:\.\d+)?)(?![\d.]*\s*(?:元|块|万|千|百|%|％|个|天|月|年|日|号|次|期|人|平|米|岁))")
#: "不是2000" after a value: the rejected bare number.
_REJECTED_BARE_RE = re.compile(r"[，,]?\s*(?:而)?不是\s*(\d+(?:\.\d+)?)(?![\d.]*\s*(?:元|块|万|千|百|%|％))")
#: The correction phrase a sentence opens with ("刚才说错了，", "更正一下：").
_OPENING_CUE_RE = re.compile(r"^(?:(?:刚才|之前|上次|前面)?(?:我)?(?:说|写|算|记|打)错了|更正一下|更正|纠正一下|不好意思)[，,：:。！!\s]*")


def correction_statement(text: str) -> str | None:
    """The statement a correction makes, written so its values can be read ("更正：押金是
    3000元，不是2000元"), or None when ``text`` corrects nothing or names no money slot's value."""
    if not says_it_corrects(text) or not _SLOT_VALUE_RE.search(text):
        return None
    body = _OPENING_CUE_RE.sub("", text.strip()).rstrip("。.！!")
    body = _SLOT_VALUE_RE.sub(lambda m: f"{m.group(1)}{m.group(2)}元", body)
    body = _REJECTED_BARE_RE.sub(lambda m: f"，不是{m.group(1)}元", body)
    if not CORRECTION_CUE_RE.search(body):
        body = "更正：" + body
    return body + "。"
