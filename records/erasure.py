"""Erasure of a matter, a conversation, a user's data or a subject (docs/records.md): the
public face. ``records.erasure_plan`` says what a unit holds (reads only);
``records.services.erasure`` erases it in one transaction with a tombstone.
"""
from records.erasure_plan import (
    ErasureError,
    Unit,
    conversation_unit,
    matter_unit,
    subject_unit,
    user_unit,
)
from records.services.erasure import ErasureResult, erase, format_counts, preview

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
