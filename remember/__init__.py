"""The memory write path (docs/write-path.md): after each answer, the turn becomes linked,
layered, evolving notes — extraction, note construction, ADD/UPDATE/IGNORE routing, A-Mem
linking and evolution, working-memory consolidation and persona promotion — run as durable,
retried, idempotent background jobs.

A Django app without models (its tables are ``memory``'s) so that its management commands
(``run_worker``, ``import_conversation``, …) live beside it; the package itself imports nothing,
since Django imports it before the models are ready. The public interface, by module:

- ``remember.turns``: ``enqueue_turn_extraction(user_message, assistant_message)`` →
  ``TurnExtraction``; ``process_turn(turn_id)`` (the job body, synchronous; None once the turn
  was erased); ``resume_stalled_turns()``; ``extract_turn_task`` (the django-tasks task)
- ``remember.extract``: ``extract_turn(user_msg, ai_resp)`` → ``ExtractionOutcome``
- ``remember.ingest``: ``import_transcript(data, *, actor, progress=None)`` → ``ImportResult``
- ``remember.working_memory``: ``working_memory(conversation)``;
  ``remember.services.consolidation``: ``do_consolidate_overflow``
- messages are written by ``memory.services.conversations.save_message``

Inside: ``extraction/`` (turn text → knowledge items), ``routing/`` (ADD/UPDATE/IGNORE against
the nearest notes, linking, evolution), ``persona.py``, ``consolidation.py``, ``ingest.py`` /
``bulk.py`` (transcript import), ``message_index.py`` (message embeddings), ``documents/`` (the
notes a document yields). A worker's liveness (takeover) is ``infra.workers``.
"""
