"""Retrieval quality on the shipped month story (``month_story.json``).

The story is imported into a fresh, throw-away firm pair (new slugs and users, so nothing
collides with real data) through the real write path
(``remember.ingest.import_transcript``), then every question is asked through
``search_memory`` as its user, in its matter. By default everything runs inside one
transaction that is rolled back at the end: the database is left as it was.

Metrics (a note *answers* a question when its ``source_message_ids`` intersect the
question's labelled messages, matched by external id):

- recall@k: the share of a question's labelled messages covered by the source messages
  of the top-k notes, averaged over questions with labels;
- MRR: 1 / rank of the first answering note (0 when none in the top ``max_k``);
- leaks: recalled notes of another firm, case notes of another matter when the question
  is asked inside a matter, or notes sourced from a message the question lists under
  ``must_not``. Must be 0.

Beside the product, the same questions are scored on the raw-message baselines (dense, BM25
and their RRF fusion over each asker's visible messages, ``evaluation.baselines``).
"""
from __future__ import annotations

import copy
import json
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from django.contrib.auth import get_user_model
from django.db import transaction

from memory.models import Firm, Matter, MemoryScope, Message, Note, Role
from memory.services.tenancy import assign_user, create_firm, create_matter, set_membership

DATASET = Path(__file__).with_name("month_story.json")
ACTOR = "system:evaluate_retrieval"


@dataclass
class QuestionOutcome:
    id: str
    layer: str
    recall: dict[int, float | None]
    reciprocal_rank: float | None
    leaks: list[str] = field(default_factory=list)
    coverage: float | None = None  # share of labelled messages the write path made any note from
    missed: list[str] = field(default_factory=list)  # labelled messages with a note, not in the top k


@dataclass
class Report:
    strategy: str
    ks: tuple[int, ...]
    outcomes: list[QuestionOutcome]
    notes_stored: int
    import_summary: str
    # raw-message baselines over the same questions: system → layer → {"recall@k"…, "mrr"}
    baselines: dict[str, dict[str, dict[str, float]]] = field(default_factory=dict)

    @property
    def leaks(self) -> int:
        return sum(len(o.leaks) for o in self.outcomes)

    def metrics(self) -> dict[str, dict[str, float]]:
        """{layer | "overall": {"questions", "recall@k"…, "mrr", "leaks"}}."""
        groups: dict[str, list[QuestionOutcome]] = defaultdict(list)
        for outcome in self.outcomes:
            groups[outcome.layer].append(outcome)
        groups["overall"] = [o for o in self.outcomes]
        table: dict[str, dict[str, float]] = {}
        for name, outcomes in groups.items():
            labelled = [o for o in outcomes if o.reciprocal_rank is not None]
            row: dict[str, float] = {"questions": len(outcomes), "labelled": len(labelled)}
            for k in self.ks:
                row[f"recall@{k}"] = _mean([o.recall[k] for o in labelled])
            row["mrr"] = _mean([o.reciprocal_rank for o in labelled])
            row["coverage"] = _mean([o.coverage for o in labelled])
            row["leaks"] = sum(len(o.leaks) for o in outcomes)
            table[name] = row
        return table

    def misses(self) -> list[str]:
        return [f"MISS {o.id}: {', '.join(o.missed)}" for o in self.outcomes if o.missed]

    def lines(self) -> list[str]:
        header = f"{'layer':<14}{'questions':>10}" + "".join(f"{'recall@' + str(k):>11}" for k in self.ks)
        out = [f"strategy={self.strategy}  notes stored={self.notes_stored}  ({self.import_summary})",
               header + f"{'MRR':>8}{'leaks':>7}{'ceiling':>9}"]
        for name, row in sorted(self.metrics().items(), key=lambda item: (item[0] == "overall", item[0])):
            out.append(
                f"{name:<14}{row['labelled']:>4}/{row['questions']:<5}"
                + "".join(f"{row[f'recall@{k}']:>11.3f}" for k in self.ks)
                + f"{row['mrr']:>8.3f}{int(row['leaks']):>7}{row['coverage']:>9.3f}"
            )
        out.append("ceiling = share of labelled messages the write path stored any note from "
                   "(the best recall any retrieval could reach)")
        if self.baselines:
            out.append("raw-message baselines over the same users' visible messages (same questions):")
            out.append(f"{'layer':<14}" + "".join(
                f"{system + ' R@' + str(k):>13}" for system in self.baselines for k in self.ks
            ) + "".join(f"{system + ' MRR':>11}" for system in self.baselines))
            for layer in sorted(next(iter(self.baselines.values())), key=lambda name: (name == "overall", name)):
                out.append(f"{layer:<14}" + "".join(
                    f"{self.baselines[system][layer][f'recall@{k}']:>13.3f}" for system in self.baselines for k in self.ks
                ) + "".join(f"{self.baselines[system][layer]['mrr']:>11.3f}" for system in self.baselines))
        for outcome in self.outcomes:
            if outcome.leaks:
                out.append(f"LEAK {outcome.id}: {'; '.join(outcome.leaks)}")
        return out


def _mean(values: Iterable[float | None]) -> float:
    values = [v for v in values if v is not None]
    return round(sum(values) / len(values), 4) if values else 0.0


def load_dataset(path: Path | str = DATASET) -> dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def select(data: dict[str, Any], *, conversations: Iterable[str] | None = None,
           questions: Iterable[str] | None = None) -> dict[str, Any]:
    """A slice of the dataset: only these conversation ids (and questions whose labels they hold)."""
    data = copy.deepcopy(data)
    if conversations is not None:
        keep = set(conversations)
        for transcript in data["transcripts"]:
            transcript["conversations"] = [c for c in transcript["conversations"] if c["id"] in keep]
        data["transcripts"] = [t for t in data["transcripts"] if t["conversations"]]
        present = {m["id"] for t in data["transcripts"] for c in t["conversations"] for m in c["messages"]}
        data["questions"] = [q for q in data["questions"] if set(q["answers"]) <= present]
    if questions is not None:
        wanted = set(questions)
        data["questions"] = [q for q in data["questions"] if q["id"] in wanted]
    return data


def create_world(data: dict[str, Any], suffix: str) -> tuple[dict[str, Firm], dict[str, Any]]:
    """Fresh firms, users, matters and assignments named after ``data["firms"]`` (with a suffix)."""
    users_model = get_user_model()
    firms: dict[str, Firm] = {}
    users: dict[str, Any] = {}
    for spec in data["firms"]:
        firm = create_firm(name=f"eval {spec['slug']} {suffix}", slug=f"eval-{spec['slug']}-{suffix}", actor=ACTOR)
        firms[spec["slug"]] = firm
        for name in spec["users"]:
            user = users_model.objects.create_user(username=f"eval-{name}-{suffix}")
            users[name] = user
            set_membership(firm=firm, user=user, role=Role.LAWYER, actor=ACTOR)
        for matter_spec in spec["matters"]:
            matter = create_matter(firm=firm, title=matter_spec["title"], reference=matter_spec["reference"],
                                   actor=ACTOR)
            for name in matter_spec["assigned"]:
                assign_user(matter=matter, user=users[name], actor=ACTOR)
    return firms, users


def import_renamed(data: dict[str, Any], firms: dict[str, Firm], users: dict[str, Any],
                   progress: Callable[[int, int], None] | None) -> str:
    """Import ``data["transcripts"]`` (import_conversation payloads) into the renamed world."""
    from remember.ingest import import_transcript  # the write path's importer

    summaries = []
    for transcript in data["transcripts"]:
        renamed = copy.deepcopy(transcript)
        renamed["firm"] = firms[transcript["firm"]].slug
        for conversation in renamed["conversations"]:
            conversation["user"] = users[conversation["user"]].get_username()
        result = import_transcript(renamed, actor=ACTOR, progress=progress)
        summaries.append(result.summary() if hasattr(result, "summary") else str(result))
    return " | ".join(summaries)


def evaluate(
    data: dict[str, Any] | None = None,
    *,
    strategy: str = "layered",
    ks: tuple[int, ...] = (5, 10),
    keep: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    """Import the story into throw-away firms, ask every question, score; roll back unless ``keep``."""
    data = data if data is not None else load_dataset()
    with transaction.atomic():
        report = _evaluate(data, strategy=strategy, ks=ks, progress=progress)
        if not keep:
            transaction.set_rollback(True)
    return report


def _evaluate(data: dict[str, Any], *, strategy: str, ks: tuple[int, ...],
              progress: Callable[[int, int], None] | None) -> Report:
    from recall import search_memory

    suffix = uuid.uuid4().hex[:8]
    firms, users = create_world(data, suffix)
    summary = import_renamed(data, firms, users, progress)
    firm_ids = [firm.pk for firm in firms.values()]
    message_pk = dict(
        Message.objects.filter(firm_id__in=firm_ids).values_list("external_id", "pk")
    )
    user_firm = {name: firms[spec["slug"]] for spec in data["firms"] for name in spec["users"]}
    max_k = max(ks)
    noted: set[int] = set()
    for ids in Note.objects.filter(firm_id__in=firm_ids).active().values_list("source_message_ids", flat=True):
        noted.update(ids)
    external = {pk: external_id for external_id, pk in message_pk.items()}
    outcomes = []
    for question in data["questions"]:
        user = users[question["user"]]
        firm = user_firm[question["user"]]
        matter = None
        if question.get("matter"):
            matter = Matter.objects.get(firm=firm, reference=question["matter"])
        answers = {message_pk[m] for m in question["answers"] if m in message_pk}
        forbidden = {message_pk[m] for m in question.get("must_not", []) if m in message_pk}
        result = search_memory(user, question["question"], k=max_k, strategy=strategy,
                               matter_id=matter.pk if matter else None)
        leaks = []
        covered_at: dict[int, set[int]] = {}
        first_rank = None
        covered: set[int] = set()
        for rank, hit in enumerate(result.hits, start=1):
            note = hit.note
            sources = set(hit.source_message_ids)  # a note's provenance, or the raw message's turn
            if note is None:  # a raw message: the same firm and wall checks on its conversation
                message = hit.message
                if message.firm_id != firm.pk:
                    leaks.append(f"another firm's message {message.pk}")
                elif sources & forbidden:
                    leaks.append(f"must-not message {message.pk} ({message.content[:30]})")
            elif note.firm_id != firm.pk:
                leaks.append(f"another firm's note {note.pk}")
            elif matter and note.memory_scope == MemoryScope.CASE and note.matter_id not in (None, matter.pk):
                leaks.append(f"another matter's case note {note.pk}")
            elif sources & forbidden:
                leaks.append(f"must-not note {note.pk} ({note.content[:30]})")
            if sources & answers and first_rank is None:
                first_rank = rank
            covered |= sources & answers
            covered_at[rank] = set(covered)
        coverage, missed = None, []
        if answers:
            recall = {k: len(covered_at.get(min(k, len(result.hits)), set())) / len(answers) for k in ks}
            reciprocal = 1.0 / first_rank if first_rank else 0.0
            coverage = len(answers & noted) / len(answers)
            missed = sorted(external[pk] for pk in (answers & noted) - covered)
        else:
            recall, reciprocal = {k: None for k in ks}, None
        outcomes.append(QuestionOutcome(question["id"], question["layer"], recall, reciprocal, leaks,
                                        coverage, missed))
    notes_stored = Note.objects.filter(firm_id__in=firm_ids).count()
    baselines = _baselines(data["questions"], users, message_pk, ks)
    return Report(strategy=strategy, ks=ks, outcomes=outcomes, notes_stored=notes_stored, import_summary=summary,
                  baselines=baselines)


def _baselines(questions: list[dict[str, Any]], users: dict[str, Any], message_pk: dict[str, int],
               ks: tuple[int, ...]) -> dict[str, dict[str, dict[str, float]]]:
    """Dense, BM25 and RRF over each asker's visible raw messages, scored like the product."""
    from infra.embeddings import get_embedder
    from evaluation.baselines import BASELINES, indexes_for
    from evaluation.metrics import recall_at_k, reciprocal_rank

    labelled = [q for q in questions if any(m in message_pk for m in q["answers"])]
    indexes = indexes_for([users[name] for name in sorted({q["user"] for q in labelled})])
    embedder = get_embedder()
    scores: dict[str, dict[str, list[dict[str, float]]]] = {s: defaultdict(list) for s in BASELINES}
    for question in labelled:
        gold = {message_pk[m] for m in question["answers"] if m in message_pk}
        ranked = indexes[users[question["user"]].pk].rank(question["question"], embedder.embed_query(question["question"]))
        for system in BASELINES:
            ranking = [{pk} for pk in ranked[system]]
            row = {f"recall@{k}": recall_at_k(ranking, gold, k) for k in ks}
            row["mrr"] = reciprocal_rank(ranking, gold, max(ks))
            scores[system][question["layer"]].append(row)
            scores[system]["overall"].append(row)
    return {system: {layer: {key: _mean(row[key] for row in rows) for key in rows[0]}
                     for layer, rows in layers.items()}
            for system, layers in scores.items()}
