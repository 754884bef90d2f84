"""Which language a text is in, as the reader needs it: Chinese or English."""
from __future__ import annotations

import re

_CJK_RE = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD_RE = re.compile(r"[A-Za-z]{2,}")
_FIRST_LETTER_RE = re.compile(r"[A-Za-z\u4e00-\u9fff]")


def detect_language(text: str) -> str:
    """'zh' when the text is Chinese, else 'en': a text without a Chinese character is English,
    and so is one that opens with a Latin letter and has at least as many English words as
    Chinese characters (a company's name in brackets, a term like 协商解除)."""
    chinese = len(_CJK_RE.findall(text or ""))
    if not chinese:
        return "en"
    first = _FIRST_LETTER_RE.search(text)
    english = len(_LATIN_WORD_RE.findall(text))
    return "en" if first and first.group(0).isascii() and english >= max(3, chinese) else "zh"
