"""The memory write path (docs/write-path.md): after each answer, the turn becomes linked,
layered, evolving notes — extraction, note construction, ADD/UPDATE/IGNORE routing, A-Mem
linking and evolution, working-memory consolidation and persona promotion — run as durable,
retried, idempotent background jobs.

Public interface (what chat, stories and evaluation call):

- ``save_message(...)``: re-exported from ``memory.services.conversations``, where messages are written
- ``enqueue_turn_extraction(user_message, assistant_message)`` → ``TurnExtraction``
- ``process_turn(turn_id)`` → ``TurnExtraction`` (the job body, synchronous; None once the turn was erased)
- ``extract_turn(user_msg, ai_resp)`` → ``ExtractionOutcome``
- ``import_transcript(data, *, actor, progress=None)`` → ``ImportResult``
- ``working_memory(conversation)``, ``resume_stalled_turns()``
"""
from memory.pipeline.extract import ExtractionOutcome, extract_turn
from memory.pipeline.ingest import ImportResult, TranscriptError, TurnFailure, import_transcript
from memory.pipeline.turns import enqueue_turn_extraction, process_turn, resume_stalled_turns
from memory.pipeline.consolidation import consolidate_overflow
from memory.pipeline.working_memory import working_memory
from memory.services.conversations import save_message

__all__ = [
    "ExtractionOutcome",
    "ImportResult",
    "TurnFailure",
    "TranscriptError",
    "consolidate_overflow",
    "enqueue_turn_extraction",
    "extract_turn",
    "import_transcript",
    "process_turn",
    "resume_stalled_turns",
    "save_message",
    "working_memory",
]
