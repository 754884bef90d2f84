"""A vector as pgvector's text form, for raw SQL (``%s::vector``): the read path's note, message
and document-passage statements all send the query vector this way."""
from __future__ import annotations

import numpy as np

_last_literal: tuple[np.ndarray, str] | None = None


def vector_literal(vector: np.ndarray) -> str:
    """The query vector as pgvector text. A search sends the same vector in its note and message
    statements (on two threads): the last one written is kept, by identity."""
    global _last_literal
    last = _last_literal
    if last is not None and last[0] is vector:
        return last[1]
    literal = "[" + ",".join(map(repr, np.asarray(vector, dtype=np.float32).tolist())) + "]"
    _last_literal = (vector, literal)  # one tuple, replaced whole: safe across threads
    return literal
