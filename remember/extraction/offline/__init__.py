"""The offline extraction engine: rule-based knowledge extraction for when no
LLM is configured (docs/offline-engine.md).

It is honest about what rules can do. It reads the user's message (and,
secondarily, the assistant's reply, from which it only takes statutes and
advice), splits it into sentences and clauses, drops questions and chit-chat,
classifies what is left with the category lexicon, and turns each piece into a
short third-person note ("我" → "用户", "I" → the speaker's name) with the
dates, amounts and keywords it mentions. Anything it cannot classify is kept as what the speaker said ("Caroline said they
…", "alice说：……"), with low importance, rather than guessed or dropped.

Input is capped at ``MAX_INPUT_CHARS`` per side: the LLM path only ever sees
500 + 1500 characters of a turn (as the LLM prompt) and at most five items are kept, so
reading further into a pasted megabyte would cost time without adding notes.

Modules: ``text`` (sentences, clauses, what is not a statement), ``units`` (lexicon scores
and the units that may become notes), ``wording`` (third person, dates, English tags),
``engine`` (items, confidences, reported speech, the five-item limit).
"""

from .engine import MAX_INPUT_CHARS, extract_offline
from .text import is_chitchat, is_question, split_clauses, split_sentences

__all__ = ["MAX_INPUT_CHARS", "extract_offline", "is_chitchat", "is_question", "split_clauses", "split_sentences"]
