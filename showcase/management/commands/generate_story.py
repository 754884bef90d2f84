"""``manage.py generate_story [--firm demo-firm] [--user alice] [--source auto|llm|offline] [--fresh] [--if-empty] [--out DIR]``

One user's month of legal consultations (docs/story-and-real-llm.md), every turn through the real write
path, with a run folder showing each step (printed at the end).

Where the story comes from (``--source``, default ``LEGALMEM_DEMO_STORY``, else ``auto``):

- ``llm``: the LLM writes it one chunk (an event, or part of one) at a time, each sized to fit
  ``LLM_CONTEXT_TOKENS``; a bad chunk is asked for once more, then replaced by the shipped
  script's turns (recorded). If the server cannot deliver at all, the command fails.
- ``auto``: the same when an LLM is configured; if it cannot deliver, one line says so and
  the shipped script is run instead, with no LLM anywhere in that run.
- ``offline`` (or ``--offline``): the shipped script ``showcase/story/month_story.json``, and no
  LLM request at all in this run: extraction, consolidation and persona use the offline engine.

``--budget SECONDS`` bounds what the LLM may spend (``make run`` passes
``LEGALMEM_DEMO_STORY_BUDGET_SECONDS``): after it, the remaining chunks are the shipped
script's and the remaining turns are enqueued for the background worker instead of being
extracted before the command returns.

Running again into the same firm replays the stored story and adds nothing; ``--fresh``
deletes the story's notes (audited) and runs a new edition. The run folder is never left
empty: on a failure ``99_failure.json`` says what failed.
"""
from __future__ import annotations

import time
from contextlib import nullcontext
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy
from tqdm import tqdm

from infra.llm import LLMClient, Role, llm_forced_offline, offline_only
from memory.models import Firm, Membership, Note, SourceType
from showcase.story import (
    ChunkError,
    Generation,
    Story,
    StoryError,
    StoryLLMFailed,
    delete_story_notes,
    existing_story,
    generate_story_in_chunks,
    load_offline_script,
    offline_generation,
    parse_story,
    plan_chunks,
    run_story,
)
from showcase.story.chunks import CHUNK_MAX_TURNS
from showcase.story.generation import WHY_NO_LLM, write_json
from showcase.story.runner import STORY_ACTOR, next_edition, save_generation, story_conversations, story_from_conversations

SOURCES = ("auto", "llm", "offline")
FALLBACK_LINE = "[legalmem] the LLM could not write the demo story ({reason}); seeding the shipped script instead"


def _default_source() -> str:
    configured = getattr(settings, "LEGALMEM_DEMO_STORY", "auto")
    return configured if configured in SOURCES else "auto"


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext(
            "Generate the month-long story for a user and run every turn through the memory write path."
        )

    def add_arguments(self, parser) -> None:
        parser.add_argument("--firm", default="demo-firm", help=gettext_lazy("the firm's slug (default demo-firm)"))
        parser.add_argument("--user", default="alice", help=gettext_lazy("whose month it is (default alice)"))
        parser.add_argument("--source", choices=SOURCES, default=None,
                            help=gettext_lazy(
                                "auto (LLM if configured, else / on failure the shipped script), llm, or offline "
                                "(default: LEGALMEM_DEMO_STORY, else auto)"
                            ))
        parser.add_argument("--offline", action="store_true",
                            help=gettext_lazy("same as --source offline: no LLM in this run"))
        parser.add_argument("--fresh", action="store_true",
                            help=gettext_lazy("delete the story's notes and run a new edition"))
        parser.add_argument("--if-empty", action="store_true",
                            help=gettext_lazy("do nothing when the firm has story notes"))
        parser.add_argument("--out", help=gettext_lazy("parent folder of the run folder (default DATA_DIR/story_runs)"))
        parser.add_argument("--events", type=int, default=None,
                            help=gettext_lazy("a short story: only the first N events"))
        parser.add_argument("--turns-per-event", type=int, default=None,
                            help=gettext_lazy("a short story: N turns per event"))
        parser.add_argument("--chunk-turns", type=int, default=CHUNK_MAX_TURNS,
                            help=gettext_lazy("LLM story: at most N turns per request (default %(default)s)"))
        parser.add_argument("--budget", type=float, default=None,
                            help=gettext_lazy(
                                "seconds the LLM may spend on the story: after them the remaining chunks are the "
                                "shipped script's and the remaining turns are left to the background worker"
                            ))
        parser.add_argument("--no-progress", action="store_true", help=gettext_lazy("no progress bar"))

    def handle(self, *args, **options) -> None:
        source = "offline" if options["offline"] else (options["source"] or _default_source())
        if options["budget"] is not None and options["budget"] <= 0:
            raise CommandError("--budget must be a positive number of seconds")
        self.deadline = None if options["budget"] is None else time.monotonic() + options["budget"]
        firm = Firm.objects.filter(slug=options["firm"]).first()
        if firm is None:
            raise CommandError(f"unknown firm {options['firm']!r} (run seed_demo first for demo-firm)")
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None or not Membership.objects.filter(firm=firm, user=user).exists():
            raise CommandError(f"{options['user']!r} is not a member of firm {firm.slug!r}")
        for name in ("events", "turns_per_event", "chunk_turns"):
            if options[name] is not None and options[name] < 1:
                raise CommandError(f"--{name.replace('_', '-')} must be at least 1")
        if options["if_empty"] and Note.objects.filter(firm=firm, source_type=SourceType.CHAT_STORY).exists():
            self.stdout.write(f"firm {firm.slug} already has story notes; nothing to do")
            return
        out = Path(options["out"]) if options["out"] else Path(settings.DATA_DIR) / "story_runs"
        run_dir = out / f"{timezone.now():%Y%m%d-%H%M%S-%f}"
        run_dir.mkdir(parents=True, exist_ok=False)
        self.stdout.write(f"run folder: {run_dir}")
        try:
            self._generate_and_run(firm, user, source, options, run_dir)
        except CommandError as exc:
            if not (run_dir / "99_failure.json").exists():
                write_json(run_dir / "99_failure.json", {"stage": "story run", "source": source, "error": str(exc)})
            raise

    def _generate_and_run(self, firm, user, source: str, options, run_dir: Path) -> None:
        stored = None if options["fresh"] else existing_story(firm, user)
        offline = source == "offline"
        if stored is not None:
            generation, story, edition = self._stored(firm, user, stored)
        else:
            edition = next_edition(firm, user)
            generation, story, offline = self._new_story(firm, user, source, options, run_dir)
        if options["fresh"]:  # only once the new story is in hand: a failed generation keeps the old one
            deleted = delete_story_notes(story_conversations(firm, user), actor=STORY_ACTOR)
            self.stdout.write(f"--fresh: deleted {deleted} note(s) of the previous story (audited)")
        # --offline and the fallback: no LLM request anywhere in this run, extraction included.
        with offline_only() if offline else nullcontext():
            self._run(story, generation, firm, user, edition, run_dir, options)

    def _new_story(self, firm, user, source: str, options, run_dir: Path) -> tuple[Generation, Story, bool]:
        """A new story, and whether its run must stay offline (``--offline`` or the fallback)."""
        client = None if source == "offline" else LLMClient.from_settings(Role.BACKGROUND)
        if client is None:
            if source == "llm":
                raise CommandError("--source llm: no LLM is configured (LLM_BASE_URL is empty)")
            why = "--offline (no LLM in this run)" if source == "offline" else WHY_NO_LLM
            generation = offline_generation(why, **_limits(options))
            return generation, parse_story(generation.data, firm=firm), source == "offline"
        try:
            generation = self._from_llm(client, user, options, run_dir)
            return generation, parse_story(generation.data, firm=firm, story_id=generation.story_id), False
        except (StoryLLMFailed, ChunkError, StoryError) as exc:
            write_json(run_dir / "99_failure.json", {
                "stage": "story generation", "source": source, "error": str(exc),
                "what_next": "the shipped script, offline" if source == "auto" else "none: the command fails",
            })
            if source == "llm":
                raise CommandError(f"the LLM did not deliver a story: {exc} (records in {run_dir}; "
                                   "--source auto falls back to the shipped script)") from None
            self.stdout.write(FALLBACK_LINE.format(reason=_first_line(exc)))
            generation = offline_generation(f"the LLM could not write the story ({_first_line(exc)})",
                                            **_limits(options))
            return generation, parse_story(generation.data, firm=firm), True
        finally:
            client.close()

    def _from_llm(self, client: LLMClient, user, options, run_dir: Path) -> Generation:
        """The story from the LLM in chunks, progress printed per chunk."""
        context = int(getattr(settings, "LLM_CONTEXT_TOKENS", 8192))
        chunks = plan_chunks(load_offline_script(), username=user.get_username(), context_tokens=context,
                             max_turns=options["chunk_turns"], **_limits(options))
        self.stdout.write(
            f"asking {client.config.model} at {client.config.base_url} for the story in {len(chunks)} chunk(s) "
            f"({sum(len(c.shipped) for c in chunks)} turns, LLM_CONTEXT_TOKENS={context})…"
        )

        def progress(chunk, total: int, record: dict) -> None:
            took = sum(a["seconds"] for a in record["attempts"])
            if record["source"] == "llm":
                outcome = "written by the LLM"
            else:
                why = record.get("reason") or record["attempts"][-1]["error"]
                outcome = f"replaced by the shipped script ({why[:160]})"
            self.stdout.write(f"[story] chunk {chunk.index}/{total} ({chunk.key}, {len(chunk.shipped)} turn(s)): "
                              f"{outcome} in {took:.1f} s, {len(record['attempts'])} attempt(s)")

        return generate_story_in_chunks(client, chunks, username=user.get_username(), context_tokens=context,
                                        run_dir=run_dir, progress=progress, deadline=self.deadline)

    def _stored(self, firm, user, stored: tuple[str, int]) -> tuple[Generation, Story, int]:
        """The story already in the firm, replayed (no LLM call)."""
        story_id, edition = stored
        script = load_offline_script()
        data = story_from_conversations(firm, user, story_id, edition)
        if story_id == script.get("story_id") and len(data["turns"]) == len(script["turns"]):
            generation = offline_generation("the shipped script's story is already in the firm")
            generation.notes.append(f"the story is already in the firm (edition {edition}); replayed, nothing new")
            return generation, parse_story(script, firm=firm), edition
        generation = Generation(
            engine="stored story", story_id=story_id,
            request={"engine": "stored story", "why": "this story is already in the firm; it is replayed "
                     "from its stored conversations (no LLM call; --fresh asks for a new one)"},
            response=data, data=data, notes=["replay of a stored story: no LLM call"],
        )
        return generation, parse_story(data, firm=firm, story_id=story_id), edition

    def _run(self, story: Story, generation: Generation, firm, user, edition: int, run_dir: Path, options) -> None:
        save_generation(generation, run_dir)
        bar = None if options["no_progress"] else tqdm(total=len(story.turns), unit="turn", desc="story", file=self.stderr._out)

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar.n = done
                bar.refresh()

        try:
            # An offline run never leaves turns to the worker: the worker process would use the LLM.
            run = run_story(story, firm=firm, user=user, edition=edition, run_dir=run_dir, generation=generation,
                            progress=progress, deadline=None if llm_forced_offline() else self.deadline)
        except StoryError as exc:
            raise CommandError(f"the story cannot run for {user.get_username()}: {exc}") from None
        finally:
            if bar is not None:
                bar.close()
        summary = run.summary
        self.stdout.write(self.style.SUCCESS(
            f"story {story.story_id} (edition {edition}, {generation.engine}): {len(story.turns)} turn(s) over "
            f"{len(story.events)} event(s), {run.turns_processed} processed now, {run.messages_created} message(s) new; "
            f"extraction {summary['turns']['by_status']} by {summary['turns']['by_engine']}; "
            f"notes {summary['notes']['total']} by scope {summary['notes']['by_scope']}; "
            f"routing {summary['routing_decisions']['by_action']}; "
            f"persona promotions {summary['persona_promotions']['count']} ({run.seconds:.1f} s)"
        ))
        if run.turns_left_to_worker:
            self.stdout.write(f"the time budget was spent: {run.turns_left_to_worker} turn(s) are left to the "
                              "background worker (`generate_story` again stamps their notes once they are done)")
        unfinished = {k: v for k, v in summary["turns"]["by_status"].items() if k not in ("done", "skipped")}
        if unfinished:
            self.stderr.write(self.style.WARNING(
                f"turns not finished: {unfinished} — their errors are in turns/*.json; the worker retries them, "
                "and running generate_story again stamps the notes they produce"
            ))
        self.stdout.write(f"run folder: {run_dir}")


def _limits(options) -> dict[str, int | None]:
    """--events / --turns-per-event: a short story (the same cut for the LLM and the shipped script)."""
    return {"events": options["events"], "turns_per_event": options["turns_per_event"]}


def _first_line(exc: Exception, limit: int = 200) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return text if len(text) <= limit else text[:limit] + "…"
