"""The one rule for text arriving from outside (docs/production.md "Bad input").

Text that PostgreSQL or UTF-8 cannot store — the NUL character and lone UTF-16 surrogates
(U+D800–U+DFFF, which JSON's ``"\\ud800"`` escape can produce) — is **rejected**, never
silently cleaned: a question or a transcript is the user's words, and changing them quietly
would store something nobody said. Every entry point applies this module: the chat websocket
(``chat.consumers``), the JSON body and query string of every HTTP request
(``infra.http_input``), admin forms (through the same middleware) and
``import_conversation`` (``remember.ingest``). Each rejection names the field.

JSON is also bounded here: nesting deeper than ``INPUT_MAX_JSON_DEPTH`` is refused (a
2,000-level body would otherwise raise ``RecursionError`` deep inside a view).
"""
from __future__ import annotations

import json
import re
from typing import Any

from django.utils.translation import gettext as _

#: The deepest nesting of a JSON body or chat frame; deeper is a 400 / `bad_request`.
INPUT_MAX_JSON_DEPTH = 32

# NUL, and any UTF-16 surrogate code point (only lone ones survive decoding into a Python str).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def printable_field(name: str) -> str:
    """``name`` with each unstorable character written as its escape (``\\ud800``), so the
    400 that names the field can itself be encoded and stored."""
    return _UNSTORABLE.sub(lambda found: f"\\u{ord(found.group()):04x}", name)


class UnsafeInput(ValueError):
    """Input that cannot be taken as it is; ``field`` names where, ``message`` says why."""

    def __init__(self, field: str, message: str) -> None:
        field = printable_field(field)  # a key may itself hold the character refused
        super().__init__(f"{field}: {message}" if field else message)
        self.field = field or "body"
        self.message = message


class MalformedJSON(UnsafeInput):
    """The document is not JSON at all (or not UTF-8)."""


def unstorable_character(text: str) -> str | None:
    """A description of the first character of ``text`` that cannot be stored, or None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    char = found.group()
    if char == "\x00":
        return _("the NUL character (U+0000)")
    return _("a lone surrogate (U+%(code)s)") % {"code": f"{ord(char):04X}"}


def check_text(text: str, field: str) -> str:
    """``text`` unchanged when it can be stored; otherwise UnsafeInput naming ``field``."""
    problem = unstorable_character(text)
    if problem is not None:
        raise UnsafeInput(field, _("contains %(problem)s, which cannot be stored; remove it and send again")
                          % {"problem": problem})
    return text


def check_tree(data: Any, field: str = "", *, max_depth: int | None = None) -> Any:
    """Every key and string of a decoded JSON value passes ``check_text``, and the value is
    nested at most ``max_depth`` levels (INPUT_MAX_JSON_DEPTH). Iterative: no recursion limit."""
    limit = INPUT_MAX_JSON_DEPTH if max_depth is None else max_depth
    stack: list[tuple[Any, str, int]] = [(data, field, 0)]
    while stack:
        value, where, depth = stack.pop()
        if isinstance(value, str):
            check_text(value, where)
        elif isinstance(value, (dict, list)):
            if depth >= limit:
                raise UnsafeInput(where, _("is nested more than %(limit)d levels deep") % {"limit": limit})
            if isinstance(value, dict):
                for key, item in value.items():
                    path = f"{where}.{key}" if where else str(key)
                    check_text(key, path)
                    stack.append((item, path, depth + 1))
            else:
                stack.extend((item, f"{where}[{index}]", depth + 1) for index, item in enumerate(value))
    return data


def parse_json(text: str | bytes, field: str = "") -> Any:
    """Decode a JSON document and apply ``check_tree``; any problem is UnsafeInput (a
    malformed document too, so callers have one error to answer)."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise UnsafeInput(
            field, _("is nested more than %(limit)d levels deep") % {"limit": INPUT_MAX_JSON_DEPTH}
        ) from None
    except UnicodeDecodeError:
        raise MalformedJSON(field, "is not UTF-8 text") from None
    except ValueError as error:
        raise MalformedJSON(field, f"is not valid JSON ({error})") from None
    return check_tree(data, field)
