"""Knowledge extraction: from one chat turn to at most five self-contained items.

Two engines produce the same ``ExtractedItem``: an OpenAI-compatible LLM with
the extraction prompt (``build_extraction_prompt`` + ``KNOWLEDGE_SCHEMA``, its JSON
checked by ``validate_items`` against the turn's ``TurnText``), and the rule-based
``extract_offline`` used when no LLM is configured. Pure Python: no Django models, no network.
"""

from .grounding import TurnText
from .items import (
    MAX_CONTENT_CHARS,
    MAX_ITEMS_PER_TURN,
    Category,
    ExtractedItem,
    clean_text,
    validate_items,
)
from .lexicon import context_for, detect_topic, extract_amounts, extract_dates, extract_law_refs, keywords_for
from .offline import extract_offline
from .prompt import (
    _KNOWLEDGE_EXTRACT_PROMPT,
    EXTRACTION_SYSTEM_PROMPT,
    KNOWLEDGE_ENVELOPE,
    KNOWLEDGE_EXAMPLE,
    KNOWLEDGE_SCHEMA,
    KNOWLEDGE_SCHEMA_NAME,
    build_extraction_prompt,
    is_trivial_turn,
)

__all__ = [
    "EXTRACTION_SYSTEM_PROMPT",
    "KNOWLEDGE_ENVELOPE",
    "KNOWLEDGE_EXAMPLE",
    "KNOWLEDGE_SCHEMA",
    "KNOWLEDGE_SCHEMA_NAME",
    "MAX_CONTENT_CHARS",
    "MAX_ITEMS_PER_TURN",
    "Category",
    "ExtractedItem",
    "TurnText",
    "_KNOWLEDGE_EXTRACT_PROMPT",
    "build_extraction_prompt",
    "clean_text",
    "context_for",
    "detect_topic",
    "extract_amounts",
    "extract_dates",
    "extract_law_refs",
    "extract_offline",
    "is_trivial_turn",
    "keywords_for",
    "validate_items",
]
