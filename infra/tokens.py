"""Token estimates without a tokenizer, shared by the read path (the injection budget), the
write path (extraction prompts) and chat (the context budget).

Each CJK character (and CJK punctuation) counts as one token, every other run of non-space
characters as one token per 4 characters (rounded up). That is close to (slightly above) what
DeepSeek / OpenAI tokenizers give for Chinese legal text, so staying under a budget is safe.
"""
from __future__ import annotations

import math
import re

_CJK = re.compile(r"[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]")
_OTHER = re.compile(r"[^\s\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]+")


def estimate_tokens(text: str) -> int:
    """CJK characters count one each; other non-space runs one per 4 characters."""
    return len(_CJK.findall(text)) + sum(math.ceil(len(run) / 4) for run in _OTHER.findall(text))
