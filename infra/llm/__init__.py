"""LLM access for LegalMem: one client for any OpenAI-compatible server.

``LLMClient.from_settings()`` returns None when no server is configured
(``LLM_BASE_URL`` empty); callers then use the offline engine.
"""

from .client import LLMClient
from .config import LLMConfig, Role
from .errors import (
    LLMBadOutput,
    LLMError,
    LLMFormatRejected,
    LLMRejected,
    LLMStopped,
    LLMStreamIncomplete,
    LLMTooSlow,
    LLMUnavailable,
)
from .gate import Priority, RequestGate
from .in_flight import stop_generations
from .json_requests import DEFAULT_JSON_SYSTEM, JSONReply
from .structured import JSONMode, JSONReplyError, example_for, parse_json_object, schema_hint, validate_json
from .switch import llm_forced_offline, offline_only

__all__ = [
    "DEFAULT_JSON_SYSTEM",
    "JSONMode",
    "JSONReply",
    "JSONReplyError",
    "LLMBadOutput",
    "LLMClient",
    "LLMConfig",
    "LLMError",
    "LLMFormatRejected",
    "LLMStopped",
    "LLMStreamIncomplete",
    "LLMTooSlow",
    "Priority",
    "RequestGate",
    "Role",
    "example_for",
    "LLMRejected",
    "LLMUnavailable",
    "parse_json_object",
    "schema_hint",
    "stop_generations",
    "llm_forced_offline",
    "offline_only",
    "validate_json",
]
