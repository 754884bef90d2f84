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

import legaltext

#: Slot words whose bare number is an amount of money in 元 ("押金是3000" = 3000元).
MONEY_SLOT_RE = re.compile(r"押金|保证金|定金|订金|租金|房租|月租|月薪|工资|薪水|底薪|奖金|补偿金|赔偿金|违约金|首付|尾款|价款|报价|货款|欠款|借款|医疗费|加班费")
#: A bare number: no unit after it.
_BARE_RE = re.compile(r"^\d+(?:\.\d+)?$")
#: What follows an opening cue before the statement starts.
_AFTER_CUE = "，,：:。！!、 "


def correction_statement(text: str) -> str | None:
    """The statement a correction makes, written so its values can be read ("更正：押金是
    3000元，不是2000元"), or None when ``text`` corrects no money slot's value. The cue and
    the values are the reader's (``legaltext.read(...).corrections``)."""
    said = legaltext.read(text).corrections
    found = [c for c in said if c.new or c.old]
    if not found or not MONEY_SLOT_RE.search(text):
        return None
    body = text.strip().rstrip("。.！!")
    first = said[0]
    opens = first.start == 0 and not re.search(r"\d", first.text)  # "刚才说错了，…", not "是3000不是2000"
    if opens:
        body = body[first.end:].lstrip(_AFTER_CUE)
    for value in {v for c in found for v in (c.new, c.old) if v and _BARE_RE.match(v)}:
        body = re.sub(rf"(?<![\d.]){re.escape(value)}(?![\d.元])", f"{value}元", body)
    body = re.sub(r"(?<=元)\s*(?=(?:而)?不是)", "，", body)
    return ("更正：" if opens or not legaltext.read(body).corrections else "") + body + "。"
