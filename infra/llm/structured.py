"""Structured output: which JSON mode to ask for, what to tell a model that cannot be
forced into a schema, and how a reply is parsed and checked.

Why a module of its own: small local models (llama.cpp, Ollama) answer JSON requests in
ways hosted APIs never do — they echo the JSON Schema back as a wrapper around the data,
or copy a raw schema instead of filling it in. Prompts therefore show an *example reply*,
never the raw schema, and a reply wrapped in an echoed schema is unwrapped before it is
validated (by ``jsonschema``). Validation checks only the envelope the caller asks for, so one bad item does
not throw away a whole reply (items are the caller's to check one by one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from enum import Enum
from typing import Any

from jsonschema import Draft202012Validator


class JSONMode(str, Enum):
    """How :meth:`LLMClient.complete_json` asks for JSON, in fallback order."""

    JSON_SCHEMA = "json_schema"
    JSON_OBJECT = "json_object"
    PLAIN = "plain"


MODE_ORDER: tuple[JSONMode, ...] = (JSONMode.JSON_SCHEMA, JSONMode.JSON_OBJECT, JSONMode.PLAIN)

#: Appended to the prompt when the server cannot enforce the schema itself: an example
#: reply, not the schema (a model shown a schema tends to return the schema).
EXAMPLE_HINT_PREFIX = "\n\n只返回一个合法的 JSON 对象（不要 markdown 代码块，不要任何解释，不要返回 schema 本身），格式如下例：\n"

#: Added to the prompt when a reply was refused, so the retry is told what was wrong.
RETRY_HINT = "\n\n注意：上一次的回复不合格（{problems}）。请直接返回按上面示例填写的数据对象，不要返回 schema、类型说明或解释。"

#: Placeholder for free-text fields in a generated example.
EXAMPLE_TEXT = "..."


class JSONReplyError(ValueError):
    """A reply is not a JSON object matching the schema (internal to retries;
    surfaces to callers as :class:`LLMBadOutput`)."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


# --------------------------------------------------------------------------
# JSON parsing and validation
# --------------------------------------------------------------------------

_FENCE_RE = re.compile(r"\A```(?:json|JSON)?[ \t]*\r?\n(?P<body>.*?)\r?\n?[ \t]*```\Z", re.DOTALL)


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def validate_json(instance: Any, schema: Mapping[str, Any]) -> list[str]:
    """The problems of ``instance`` against the JSON Schema ``schema`` (checked by
    ``jsonschema``), each as ``"<JSON path>: <message>"``; an empty list means valid."""
    return [f"{error.json_path}: {error.message}" for error in Draft202012Validator(schema).iter_errors(instance)]


def parse_json_object(raw: str | None, schema: Mapping[str, Any]) -> dict[str, Any]:
    """Parse a model reply strictly: optional surrounding whitespace and one
    ```json fence are removed, nothing else is repaired. The result must be a
    JSON object that passes :func:`validate_json`; otherwise
    :class:`JSONReplyError` lists what is wrong."""
    if raw is None:
        raise JSONReplyError(["empty reply (no content)"])
    text = raw.strip()
    fenced = _FENCE_RE.match(text)
    if fenced:
        text = fenced.group("body").strip()
    if not text:
        raise JSONReplyError(["empty reply"])
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise JSONReplyError([f"not valid JSON: {exc}"]) from exc
    if not isinstance(value, dict):
        raise JSONReplyError([f"expected a JSON object, got {_json_type(value)}"])
    if validate_json(value, schema) and _looks_like_schema(value):
        value = unwrap_schema_echo(value)
    problems = validate_json(value, schema)
    if problems:
        raise JSONReplyError(problems)
    return value


def example_for(schema: Mapping[str, Any]) -> Any:
    """A minimal instance of ``schema`` to show a model: objects with their properties,
    arrays with one element, the first ``enum`` option, "..." for free text."""
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    if kind == "object":
        props = schema.get("properties") or {}
        return {key: example_for(sub) for key, sub in props.items() if isinstance(sub, Mapping)}
    if kind == "array":
        items = schema.get("items")
        return [example_for(items)] if isinstance(items, Mapping) else []
    if kind in ("number", "integer"):
        return 0
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return EXAMPLE_TEXT


def schema_hint(schema: Mapping[str, Any], example: Any = None) -> str:
    """The instruction appended to prompts when the server does not enforce the schema:
    an example reply (``example``, or one generated from ``schema``)."""
    shown = example if example is not None else example_for(schema)
    return EXAMPLE_HINT_PREFIX + json.dumps(shown, ensure_ascii=False)


def retry_hint(problems: list[str]) -> str:
    """The sharper instruction added to a retry after an invalid reply."""
    return RETRY_HINT.format(problems="; ".join(problems[:3])[:300])


def _looks_like_schema(value: Any) -> bool:
    return isinstance(value, dict) and (
        (value.get("type") == "object" and isinstance(value.get("properties"), dict))
        or (value.get("type") == "array" and "items" in value)
    )


def unwrap_schema_echo(value: Any) -> Any:
    """Undo a schema echoed around the data: ``{"type": "object", "properties": {"knowledge":
    [...]}}`` becomes ``{"knowledge": [...]}``; nested echoes (``{"type": "array", "items":
    [...]}``) are unwrapped the same way. Anything else is returned unchanged."""
    if not _looks_like_schema(value):
        return value
    if value.get("type") == "object":
        return {key: unwrap_schema_echo(inner) for key, inner in value["properties"].items()}
    items = value.get("items")
    if isinstance(items, list):
        return [unwrap_schema_echo(inner) for inner in items]
    return value
