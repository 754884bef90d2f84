"""The client's and the assistant's pronouns rewritten into a self-contained note: the user's
"我" is "用户" (named afterwards by ``grounding.with_names`` and the subject rules), the
assistant's "您" is the user. Shared by the offline engine's wording and the model's items."""
from __future__ import annotations

import re

from .quoting import rewritten_outside_quotes

_USER_PRONOUNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"我们公司|我们单位|我司|我单位", "用户所在单位"),
        (r"我们家|我家", "用户家"),
        (r"我们|咱们|我方", "用户一方"),
        (r"本人", "用户"),
        (r"我(?![国院])", "用户"),
        (r"咱", "用户"),
        (r"你们(?!好)|您们(?!好)|[你您](?!好)", "助手"),  # "律师你好" greets, it names nobody
    )
)
_ASSISTANT_PRONOUNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p), r)
    for p, r in (
        (r"你们(?!好)|您们(?!好)", "用户一方"),
        (r"[你您](?!好)", "用户"),
        (r"我们", "律所"),  # "由我们给华纶发律师函": the firm sends it, not the assistant
        (r"我(?![国院])", "助手"),
    )
)
def third_person(text: str, speaker: str) -> str:
    """Rewrite pronouns outside quotes: the user's "我" becomes "用户", the assistant's "您" too."""
    rules = _USER_PRONOUNS if speaker == "user" else _ASSISTANT_PRONOUNS
    return rewritten_outside_quotes(text, lambda part: apply_rules(rules, part)).replace("用户用户", "用户")


def apply_rules(rules: tuple[tuple[re.Pattern[str], str], ...], text: str) -> str:
    """``text`` with each (pattern, replacement) of ``rules`` applied in order."""
    for pattern, replacement in rules:
        text = pattern.sub(replacement, text)
    return text
