"""Template filter showing control characters as visible escapes (``\\x07``) instead of the
empty boxes a browser draws for them (docs/chat-page.md "Control characters")."""
from __future__ import annotations

import re

from django import template

register = template.Library()

# C0 controls except tab / newline / carriage return, DEL, and the C1 controls.
CONTROL_CHARACTERS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
LINE_BREAKS = re.compile(r"[\t\r\n]+")


def visible_escapes(text: str) -> str:
    """``text`` with each control character written as ``\\xNN``."""
    return CONTROL_CHARACTERS.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


@register.filter
def one_line(value: object) -> str:
    """A title on one line: line breaks and tabs become spaces, control characters escapes."""
    return visible_escapes(LINE_BREAKS.sub(" ", str(value or ""))).strip()
