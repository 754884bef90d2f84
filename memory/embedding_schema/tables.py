"""The tables that hold vectors, and the text each row's vector is made from.

Every table here has an ``embedding`` (vector) column, most an ``embedding_model`` one too; a
re-embedding run adds ``embedding_next`` / ``embedding_model_next`` beside them and the switch
renames them into place (docs/operations.md, "Changing the embedding model").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from memory.models import Message
from memory.embedding_text import embedding_text


@dataclass(frozen=True)
class VectorTable:
    table: str
    id_type: str  # the SQL type of the primary key: keyset pagination and the write casts to it
    text_columns: tuple[str, ...]
    text_of: Callable[[dict], str]  # the text the live write path encodes for this row
    model_column: bool = True  # has ``embedding_model`` (persona traits do not)


def _message_text(row: dict) -> str:
    return embedding_text(Message(role=row["role"], speaker=row["speaker"], content=row["content"],
                                  external_id=row["external_id"]))


VECTOR_TABLES: tuple[VectorTable, ...] = (
    # a note is encoded from its content (memory/services/notes.py, create_note / correct_note)
    VectorTable("memory_note", "uuid", ("content",), lambda row: row["content"]),
    # a message from "speaker: content" (remember/message_index.py)
    VectorTable("memory_message", "bigint", ("role", "speaker", "content", "external_id"), _message_text),
    # a persona trait from its content (remember/persona.py)
    VectorTable("memory_personatrait", "bigint", ("content",), lambda row: row["content"], model_column=False),
)
