"""Erasure of a matter, a conversation, a user's data or a subject (docs/records.md).

``units`` says what a unit holds; ``apply`` erases it in one transaction with a tombstone.
"""
from records.erasure.apply import ErasureResult, erase, format_counts, preview
from records.erasure.plan import (
    ErasureError,
    Unit,
    conversation_unit,
    matter_unit,
    subject_unit,
    user_unit,
)

__all__ = [
    "ErasureError",
    "ErasureResult",
    "Unit",
    "conversation_unit",
    "erase",
    "format_counts",
    "matter_unit",
    "preview",
    "subject_unit",
    "user_unit",
]
