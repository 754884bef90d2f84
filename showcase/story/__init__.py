"""The month-long story showcase (docs/story-and-real-llm.md): one user's month of legal consultations,
written by the LLM (or, without one, the script shipped here), run turn by turn through the
real write path, with a run folder that shows every step.

Public interface (what ``manage.py generate_story`` calls):

- ``load_offline_script()`` → ``Story``; ``parse_story(data, firm=...)`` → ``Story`` (raises ``StoryError``)
- ``plan_chunks(script, username=..., context_tokens=...)`` → ``[StoryChunk]`` (each fits the context)
- ``generate_story_in_chunks(client, chunks, username=..., context_tokens=..., run_dir=...)`` → ``Generation``
  (raises ``StoryLLMFailed`` when the server cannot deliver; bad chunks are replaced and recorded)
- ``run_story(story, firm=..., user=..., run_dir=..., edition=..., progress=None)`` → ``StoryRun``
- ``event_tag(name)``, ``delete_story_notes(...)``
"""
from showcase.story.chunks import ChunkError, StoryChunk, plan_chunks
from showcase.story.generation import Generation, StoryLLMFailed, generate_story_in_chunks, offline_generation
from remember.drafts import event_tag
from showcase.story.provenance import delete_story_notes
from showcase.story.runner import StoryRun, existing_story, run_story
from showcase.story.script import STORY_SCHEMA, Story, StoryError, StoryEvent, StoryTurn, load_offline_script, parse_story

__all__ = [
    "STORY_SCHEMA",
    "ChunkError",
    "Generation",
    "Story",
    "StoryChunk",
    "StoryError",
    "StoryEvent",
    "StoryLLMFailed",
    "StoryRun",
    "StoryTurn",
    "delete_story_notes",
    "event_tag",
    "existing_story",
    "generate_story_in_chunks",
    "load_offline_script",
    "offline_generation",
    "parse_story",
    "plan_chunks",
    "run_story",
]
