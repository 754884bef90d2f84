"""``manage.py generate_story [--firm demo-firm] [--user alice] [--fresh] [--if-empty] [--offline] [--out DIR]``

One user's month of legal consultations (seed 000 §7), every turn through the real write
path, with a run folder showing each step (printed at the end). With an LLM configured the
LLM writes the story; without one (or with ``--offline``) the script shipped in
``memory/story/month_story.json`` is used. Running again into the same firm replays the
stored story and adds nothing; ``--fresh`` deletes the story's notes (audited) and runs a
new edition.
"""
from __future__ import annotations

from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone
from tqdm import tqdm

from memory.llm import LLMClient, LLMError
from memory.models import Firm, Membership, Note, SourceType
from memory.story import (
    Generation,
    Story,
    StoryError,
    delete_story_notes,
    existing_story,
    generate_story_with_llm,
    load_offline_script,
    offline_generation,
    parse_story,
    run_story,
)
from memory.story.runner import STORY_ACTOR, save_generation, next_edition, story_conversations, story_from_conversations

OFFLINE_MIN_TURNS, OFFLINE_MIN_EVENTS = 80, 5


class Command(BaseCommand):
    help = "Generate the month-long story for a user and run every turn through the memory write path."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--firm", default="demo-firm", help="the firm's slug (default demo-firm)")
        parser.add_argument("--user", default="alice", help="whose month it is (default alice)")
        parser.add_argument("--fresh", action="store_true", help="delete the story's notes and run a new edition")
        parser.add_argument("--if-empty", action="store_true", help="do nothing when the firm has story notes")
        parser.add_argument("--offline", action="store_true", help="use the shipped script even with an LLM configured")
        parser.add_argument("--out", help="parent folder of the run folder (default DATA_DIR/story_runs)")
        parser.add_argument("--min-turns", type=int, default=OFFLINE_MIN_TURNS, help="smallest LLM story accepted")
        parser.add_argument("--min-events", type=int, default=OFFLINE_MIN_EVENTS, help="fewest LLM story events accepted")
        parser.add_argument("--no-progress", action="store_true", help="no progress bar")

    def handle(self, *args, **options) -> None:
        firm = Firm.objects.filter(slug=options["firm"]).first()
        if firm is None:
            raise CommandError(f"unknown firm {options['firm']!r} (run seed_demo first for demo-firm)")
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None or not Membership.objects.filter(firm=firm, user=user).exists():
            raise CommandError(f"{options['user']!r} is not a member of firm {firm.slug!r}")
        if options["if_empty"] and Note.objects.filter(firm=firm, source_type=SourceType.CHAT_STORY).exists():
            self.stdout.write(f"firm {firm.slug} already has story notes; nothing to do")
            return
        stored = None if options["fresh"] else existing_story(firm, user)
        out = Path(options["out"]) if options["out"] else Path(settings.DATA_DIR) / "story_runs"
        run_dir = out / f"{timezone.now():%Y%m%d-%H%M%S-%f}"
        run_dir.mkdir(parents=True, exist_ok=False)
        try:
            generation, story, edition = self._story(firm, user, stored, options, run_dir)
        except StoryError as exc:
            raise CommandError(f"the story is not valid: {exc} (request and response are in {run_dir})") from None
        if options["fresh"]:  # only once the new story is in hand: a failed generation keeps the old one
            deleted = delete_story_notes(story_conversations(firm, user), actor=STORY_ACTOR)
            self.stdout.write(f"--fresh: deleted {deleted} note(s) of the previous story (audited)")
        bar = None if options["no_progress"] else tqdm(total=len(story.turns), unit="turn", desc="story", file=self.stderr._out)

        def progress(done: int, total: int) -> None:
            if bar is not None:
                bar.n = done
                bar.refresh()

        try:
            run = run_story(story, firm=firm, user=user, edition=edition, run_dir=run_dir,
                            generation=generation, progress=progress)
        except StoryError as exc:
            raise CommandError(f"the story cannot run for {user.get_username()}: {exc}") from None
        finally:
            if bar is not None:
                bar.close()
        summary = run.summary
        self.stdout.write(self.style.SUCCESS(
            f"story {story.story_id} (edition {edition}, {generation.engine}): {len(story.turns)} turn(s) over "
            f"{len(story.events)} event(s), {run.turns_processed} processed now, {run.messages_created} message(s) new; "
            f"notes {summary['notes']['total']} by scope {summary['notes']['by_scope']}; "
            f"routing {summary['routing_decisions']['by_action']}; "
            f"persona promotions {summary['persona_promotions']['count']} ({run.seconds:.1f} s)"
        ))
        unfinished = {k: v for k, v in summary["turns"]["by_status"].items() if k not in ("done", "skipped")}
        if unfinished:
            self.stderr.write(self.style.WARNING(
                f"turns not finished: {unfinished} — their errors are in turns/*.json; the worker retries them, "
                "and running generate_story again stamps the notes they produce"
            ))
        self.stdout.write(f"run folder: {run_dir}")

    def _story(self, firm, user, stored, options, run_dir: Path) -> tuple[Generation, Story, int]:
        """The generation record, the validated story and its edition."""
        if stored is not None:
            story_id, edition = stored
            script = load_offline_script()
            if story_id == script.get("story_id"):
                generation = offline_generation()
                generation.notes.append(f"the story is already in the firm (edition {edition}); replayed, nothing new")
                return generation, parse_story(script, firm=firm), edition
            data = story_from_conversations(firm, user, story_id, edition)
            generation = Generation(
                engine="stored story", story_id=story_id,
                request={"engine": "stored story", "why": "this story is already in the firm; it is replayed "
                         "from its stored conversations (no LLM call; --fresh asks for a new one)"},
                response=data, data=data, notes=["replay of a stored story: no LLM call"],
            )
            return generation, parse_story(data, firm=firm, story_id=story_id), edition
        edition = next_edition(firm, user)
        client = None if options["offline"] else LLMClient.from_settings()
        if client is None:
            generation = offline_generation()
            story = parse_story(generation.data, firm=firm, min_turns=OFFLINE_MIN_TURNS, min_events=OFFLINE_MIN_EVENTS)
            return generation, story, edition
        self.stdout.write(f"asking {client.config.model} at {client.config.base_url} for the story…")
        try:
            generation = generate_story_with_llm(client, firm=firm, user=user, min_turns=options["min_turns"],
                                                 min_events=options["min_events"])
        except LLMError as exc:
            raise CommandError(f"the LLM did not deliver a story: {exc} (use --offline for the shipped script)") from None
        finally:
            client.close()
        save_generation(generation, run_dir)  # kept even when the story below is refused
        story = parse_story(generation.data, firm=firm, story_id=generation.story_id,
                            min_turns=options["min_turns"], min_events=options["min_events"])
        return generation, story, edition
