"""Run the multi-session set: import it through the write path, ask every question through
``search_memory`` as its user, and score the product beside three raw-message baselines.

Everything happens in throw-away firms (fresh slugs and usernames) inside one transaction
that is rolled back at the end unless ``keep``: the database is left as it was.

Scores per question and system (product, dense, bm25, rrf):

- recall_all@k: 1 when every gold message is among the first k positions (a product hit
  covers the messages its provenance names, ``hit.source_message_ids``; a baseline position is one message);
- MRR: 1 / the rank of the first position covering any gold message (0 beyond k = 10).

``must_not_recall`` questions have no recall: their gold is evidence the asker may not see,
and any product hit standing for it is a leak. Every product hit of every question is also
checked against the asker's reach: another firm's note or message, a matter they are not
assigned to, another user's profile note, or another user's raw message is a leak. Baselines index only
``Message.objects.visible_to(asker)``.
"""
from __future__ import annotations

import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from django.db import transaction

from evaluation.baselines import BASELINES, indexes_for
from evaluation.metrics import mean, paired_bootstrap, recall_all_at_k, reciprocal_rank
from evaluation.multisession import CATEGORIES, LANGUAGES, MUST_NOT, NO_RECALL, EvaluationSet
from evaluation.runner import create_world, import_renamed
from memory.models import Matter, MemoryScope, Message, Note
from recall import Hit

SYSTEMS = ("product", *BASELINES)
KS = (5, 10)
DEPTH = max(KS)
FLOOR_CHECKED = 5
# Rows of questions asked a second time in other words (the outside set's English questions in
# Chinese): shown on their own, never counted again in the overall rows.
COMPANIONS = frozenset({"english_in_chinese"})  # the raw floor: the baseline RRF's first five must be in the product's top 10


@dataclass
class Outcome:
    """One question's scores per system, its leaks and what the product returned."""

    question: dict[str, Any]
    scores: dict[str, dict[str, float]] = field(default_factory=dict)  # system → {"r@5", "r@10", "mrr"}
    leaks: list[str] = field(default_factory=list)
    noted: bool | None = None  # every gold message is cited by some active note
    returned: list[list[str]] = field(default_factory=list)  # product positions as message external ids
    kinds: list[str] = field(default_factory=list)  # each product position's kind ("note" | "message")
    rrf_top: list[str] = field(default_factory=list)  # the raw RRF baseline's top 10, for comparison
    texts: list[str] = field(default_factory=list)  # each product position's text (note or message), shortened
    semantic: list[float] = field(default_factory=list)  # each product position's semantic similarity
    floor_kept: float | None = None  # share of the raw RRF baseline's first five in the product's top 10

    @property
    def recalls(self) -> bool:
        """Whether the question has something to recall (not must-not-recall, not never-said)."""
        return self.question["category"] not in NO_RECALL


@dataclass
class MemoryReport:
    outcomes: list[Outcome]
    notes_stored: int
    messages: int
    import_summary: str
    strategy: str
    seconds: dict[str, float]
    embedder: str = ""  # the dense baseline's encoder (the product's too)
    split: str = "all"  # which questions: "dev", "test" or "all"

    @property
    def leaks(self) -> int:
        return sum(len(o.leaks) for o in self.outcomes)

    @property
    def messages_per_hit(self) -> float:
        """How many messages a product position stands for on average: a baseline position is
        one message, so a figure far above 1 means notes citing many turns carry the recall."""
        positions = [len(ids) for o in self.outcomes for ids in o.returned]
        return round(sum(positions) / len(positions), 2) if positions else 0.0

    def rows(self) -> list[dict[str, Any]]:
        """Figures per (category, language), per category, per language, overall (recall
        questions), and by whose words the gold is (``gold_speaker``: the assistant's or the user's)."""
        rows = []
        for (category, language), outcomes in self._groups().items():
            row: dict[str, Any] = {"category": category, "language": language, "questions": len(outcomes),
                                   "leaks": sum(len(o.leaks) for o in outcomes)}
            if category in NO_RECALL:
                row["empty"] = mean(1.0 if not o.returned else 0.0 for o in outcomes)
            else:
                for system in SYSTEMS:
                    row[system] = {metric: mean(o.scores[system][metric] for o in outcomes)
                                   for metric in ("r@5", "r@10", "mrr")}
                row["noted"] = mean(1.0 if o.noted else 0.0 for o in outcomes)
            rows.append(row)
        return rows

    def _groups(self) -> dict[tuple[str, str], list[Outcome]]:
        """The outcomes of every row of ``rows``, in its order."""
        groups: dict[tuple[str, str], list[Outcome]] = defaultdict(list)
        for outcome in self.outcomes:
            category, language = outcome.question["category"], outcome.question["language"]
            groups[(category, language)].append(outcome)
            groups[(category, "all")].append(outcome)
            if outcome.recalls and category not in COMPANIONS:
                groups[("all", language)].append(outcome)
                groups[("all", "all")].append(outcome)
                speaker = outcome.question.get("gold_speaker")
                if speaker:
                    groups[(f"gold {speaker}", "all")].append(outcome)
        speakers = sorted({category for category, _ in groups if category.startswith("gold ")})
        order = [*CATEGORIES, "all", *speakers]
        return dict(sorted(
            groups.items(), key=lambda item: (order.index(item[0][0]), [*LANGUAGES, "all"].index(item[0][1]))))

    def for_split(self, split: str) -> "MemoryReport":
        """The same run's figures on one split's questions (``question["split"]``)."""
        outcomes = [o for o in self.outcomes if o.question.get("split") == split]
        return replace(self, outcomes=outcomes, split=split)

    def below_baselines(self) -> list[str]:
        """Rows (category / language) where the product is below raw RRF or raw dense at R@10 or
        MRR, each with the difference's 95% paired-bootstrap interval over its questions."""
        losing = []
        for (category, language), outcomes in self._groups().items():
            if category in NO_RECALL:
                continue
            for baseline in ("rrf", "dense"):
                for metric in ("r@10", "mrr"):
                    if mean(o.scores["product"][metric] for o in outcomes) >= mean(o.scores[baseline][metric]
                                                                                    for o in outcomes):
                        continue
                    difference, low, high = self.difference(outcomes, baseline, metric)
                    losing.append(f"{category}/{language} {metric} < {baseline} "
                                  f"({difference:+.3f}, 95% {low:+.3f}..{high:+.3f}, n={len(outcomes)})")
        return losing

    def overall_differences(self) -> list[dict[str, Any]]:
        """Product minus raw RRF and raw dense on every recall question, at R@10 and MRR, with
        the 95% paired-bootstrap interval: whether the product's lead (or loss) is more than noise."""
        outcomes = self._groups().get(("all", "all"), [])
        if not outcomes:
            return []
        return [dict(zip(("baseline", "metric", "difference", "low", "high"),
                         (baseline, metric, *self.difference(outcomes, baseline, metric))))
                for baseline in ("rrf", "dense") for metric in ("r@10", "mrr")]

    @staticmethod
    def difference(outcomes: list[Outcome], baseline: str, metric: str) -> tuple[float, float, float]:
        """Mean of product minus ``baseline`` at ``metric`` over ``outcomes``, and its 95% interval."""
        return paired_bootstrap([o.scores["product"][metric] - o.scores[baseline][metric] for o in outcomes])

    def lines(self) -> list[str]:
        header = f"{'category':<16}{'lang':<5}{'n':>4} "
        header += "".join(f"| {system:<7}{'R@5':>6}{'R@10':>6}{'MRR':>6} " for system in ("product", "rrf", "dense", "bm25"))
        header += f"|{'noted':>6}{'leaks':>6}"
        out = [f"split={self.split}  strategy={self.strategy}  dense baseline={self.embedder}  messages={self.messages}  notes stored={self.notes_stored}  "
               f"(import {self.seconds.get('import', 0):.0f} s, questions {self.seconds.get('questions', 0):.0f} s)",
               f"import: {self.import_summary}",
               f"product hits: {sum(len(o.returned) for o in self.outcomes)}, "
               f"{self.messages_per_hit} messages per hit on average "
               f"({', '.join(f'{kind} {count}' for kind, count in self._kinds().items())})",
               header, "-" * len(header)]
        for row in self.rows():
            line = f"{row['category']:<16}{row['language']:<5}{row['questions']:>4} "
            for system in ("product", "rrf", "dense", "bm25"):
                if system in row:
                    figures = row[system]
                    line += f"| {'':<7}{figures['r@5']:>6.3f}{figures['r@10']:>6.3f}{figures['mrr']:>6.3f} "
                else:
                    line += f"| {'':<7}{'-':>6}{'-':>6}{'-':>6} "
            noted = f"{row['noted']:>6.2f}" if "noted" in row else f"{'-':>6}"
            empty = f"  returned nothing {row['empty']:.3f}" if "empty" in row else ""
            out.append(line + f"|{noted}{row['leaks']:>6}{empty}")
        out.append("R@k = recall_all@k (all gold messages in the top k); MRR over the top 10; "
                   "noted = share of questions whose gold messages all have a note (the notes' ceiling); "
                   "leaks = product hits standing for messages the asker may not see")
        kept = [o.floor_kept for o in self.outcomes if o.floor_kept is not None]
        if kept:
            out.append(f"raw floor: of the raw RRF baseline's first {FLOOR_CHECKED} messages, {mean(kept):.3f} are in the "
                       f"product's top 10 ({sum(k == 1.0 for k in kept)} of {len(kept)} questions keep all)")
        below = self.below_baselines()
        out.append("product below raw RRF or raw dense (R@10, MRR) in: " + (", ".join(below) or "none")
                   + (" — (difference, 95% paired-bootstrap interval, questions): an interval holding 0 is within noise"
                      if below else ""))
        overall = self.overall_differences()
        if overall:
            out.append("product minus baseline on every recall question (95% paired bootstrap): " + ", ".join(
                f"{d['metric']} vs {d['baseline']} {d['difference']:+.3f} ({d['low']:+.3f}..{d['high']:+.3f})"
                for d in overall))
        for half in self.halves():
            out.append(f"half {half['half']:<5}{half['questions']:>4} " + "".join(
                f"| {system:<7}{half[system]['r@5']:>6.3f}{half[system]['r@10']:>6.3f}{half[system]['mrr']:>6.3f} "
                for system in ("product", "rrf")) + "(questions at even / odd positions of questions.json)")
        for outcome in self.outcomes:
            for leak in outcome.leaks:
                out.append(f"LEAK {outcome.question['id']}: {leak}")
        return out

    def halves(self) -> list[dict[str, Any]]:
        """Product and raw RRF figures on the questions at even and at odd positions of
        questions.json: a ranking change is tuned on the even half and checked on the odd one."""
        rows = []
        for name, parity in (("even", 0), ("odd", 1)):
            outcomes = [o for o in self.outcomes if o.scores and o.question["category"] not in COMPANIONS
                        and o.question.get("position", 0) % 2 == parity]
            if outcomes:
                rows.append({"half": name, "questions": len(outcomes), **{
                    system: {metric: mean(o.scores[system][metric] for o in outcomes) for metric in ("r@5", "r@10", "mrr")}
                    for system in ("product", "rrf")}})
        return rows

    def show(self, question_id: str) -> list[str]:
        """One question: its gold, the product's top 10 (kind, message ids, text) and raw RRF's."""
        found = [o for o in self.outcomes if o.question["id"] == question_id]
        if not found:
            return [f"SHOW {question_id}: no such question in this run"]
        outcome = found[0]
        question = outcome.question
        out = [f"SHOW {question_id} {question['category']}/{question['language']} {question['question']}  "
               f"gold={','.join(question['gold'])}  scores={outcome.scores or outcome.leaks}"]
        for position, (kind, ids, text) in enumerate(zip(outcome.kinds, outcome.returned, outcome.texts), start=1):
            mark = "*" if set(ids) & set(question["gold"]) else " "
            out.append(f"  {mark}{position:>2} {kind:<7} {','.join(ids):<28} {text}")
        if outcome.rrf_top:
            out.append(f"  rrf top 10: {' '.join(outcome.rrf_top)}")
        return out

    def _kinds(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for outcome in self.outcomes:
            for kind in outcome.kinds:
                counts[kind] += 1
        return dict(sorted(counts.items()))

    def losses(self) -> list[str]:
        """Questions the raw RRF baseline answers within 10 and the product does not: what to look at."""
        out = []
        for outcome in self.outcomes:
            scores = outcome.scores
            if scores and scores["product"]["r@10"] < scores["rrf"]["r@10"]:
                question = outcome.question
                returned = " ".join(f"{kind[0]}:{','.join(ids)}" for kind, ids in zip(outcome.kinds, outcome.returned))
                out.append(f"LOSS {question['id']} {question['category']}/{question['language']} "
                           f"{question['question']}  gold={','.join(question['gold'])}  product top 10: {returned}")
        return out

    def as_json(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy, "embedder": self.embedder, "messages": self.messages, "notes_stored": self.notes_stored,
            "import_summary": self.import_summary, "seconds": self.seconds, "leaks": self.leaks,
            "messages_per_hit": self.messages_per_hit, "hit_kinds": self._kinds(), "split": self.split,
            "rows": self.rows(), "halves": self.halves(), "below": self.below_baselines(),
            "overall_differences": self.overall_differences(),
            "questions": [{**o.question, "scores": o.scores, "leaks": o.leaks, "noted": o.noted,
                           "product_returned": o.returned, "product_kinds": o.kinds, "product_texts": o.texts,
                           "product_semantic": o.semantic,
                           "rrf_returned": o.rrf_top} for o in self.outcomes],
        }


def run_evaluation(data: EvaluationSet, *, strategy: str = "layered", keep: bool = False,
                   progress: Callable[[int, int], None] | None = None, split: str = "all") -> MemoryReport:
    """Import ``data`` into throw-away firms, ask and score every question; roll back unless ``keep``.
    ``split`` only labels the report (``data`` is already the chosen questions)."""
    with transaction.atomic():
        report = _run(data, strategy=strategy, progress=progress)
        report.split = split
        if not keep:
            transaction.set_rollback(True)
    return report


@dataclass(frozen=True)
class _MessageInfo:
    external_id: str
    firm_id: int
    matter_id: int | None
    user_id: int  # whose conversation it is


@dataclass
class Imported:
    """A set imported into throw-away firms: who is who, and what each message is."""

    users: dict[str, Any]
    user_firm: dict[str, Any]
    assigned: dict[str, set[int]]
    info: dict[int, _MessageInfo]
    pk_of: dict[str, int]
    noted: set[int]
    firm_ids: list[int]
    summary: str
    seconds: float


def import_set(data: EvaluationSet, progress: Callable[[int, int], None] | None = None) -> Imported:
    """Create the set's world under fresh names and import its transcripts through the write path."""
    started = time.perf_counter()
    suffix = uuid.uuid4().hex[:8]
    firms, users = create_world(data.world, suffix)
    summary = import_renamed({"transcripts": data.transcripts}, firms, users, progress)
    firm_ids = [firm.pk for firm in firms.values()]
    info = {pk: _MessageInfo(*row) for pk, *row in Message.objects.filter(firm_id__in=firm_ids).values_list(
        "pk", "external_id", "firm_id", "conversation__matter_id", "conversation__user_id")}
    noted: set[int] = set()
    for ids in Note.objects.filter(firm_id__in=firm_ids).active().values_list("source_message_ids", flat=True):
        noted.update(ids)
    return Imported(
        users=users,
        user_firm={name: firms[spec["slug"]] for spec in data.world["firms"] for name in spec["users"]},
        assigned={name: {matter.pk for matter in Matter.objects.filter(assignments__user=user)}
                  for name, user in users.items()},
        info=info, pk_of={message.external_id: pk for pk, message in info.items()}, noted=noted,
        firm_ids=firm_ids, summary=summary, seconds=round(time.perf_counter() - started, 1),
    )


def _run(data: EvaluationSet, *, strategy: str, progress: Callable[[int, int], None] | None) -> MemoryReport:
    imported = import_set(data, progress)
    return ask(data, imported, strategy=strategy)


def ask(data: EvaluationSet, imported: Imported, *, strategy: str = "layered") -> MemoryReport:
    """Ask every question of ``data`` as its user and score the product beside the baselines."""
    from infra.embeddings import get_embedder
    from recall import search_memory

    started = time.perf_counter()
    users, info, pk_of = imported.users, imported.info, imported.pk_of
    askers = sorted({q["user"] for q in data.questions})
    indexes = indexes_for([users[name] for name in askers])
    embedder = get_embedder()

    outcomes = []
    for question in data.questions:
        name = question["user"]
        user, firm = users[name], imported.user_firm[name]
        gold = {pk_of[external_id] for external_id in question["gold"]}
        matter_id = None
        if question.get("matter"):
            matter_id = Matter.objects.get(firm=firm, reference=question["matter"]).pk
        # A question asked inside a dialogue comes with its earlier lines, as the chat sends them:
        # the product gets them as context; the baselines read the whole dialogue as their query.
        context = "\n".join(question.get("context") or ())
        result = search_memory(user, question["question"], k=DEPTH, strategy=strategy, matter_id=matter_id,
                               context=context)
        positions = [set(hit.source_message_ids) for hit in result.hits]
        outcome = Outcome(question, returned=[[info[pk].external_id if pk in info else f"#{pk}" for pk in sorted(p)]
                                              for p in positions],
                          kinds=[getattr(hit, "kind", "") or "note" for hit in result.hits],
                          texts=[_shortened(hit) for hit in result.hits],
                          semantic=[hit.breakdown.semantic for hit in result.hits])
        for hit, sources in zip(result.hits, positions):
            outcome.leaks.extend(_leaks(hit, sources, user.pk, firm.pk, imported.assigned[name], info,
                                        gold if question["category"] == MUST_NOT else set()))
        if outcome.recalls:
            outcome.noted = gold <= imported.noted
            rankings = {"product": positions}
            dialogue = f"{context}\n{question['question']}" if context else question["question"]
            raw = indexes[user.pk].rank(dialogue, embedder.embed_query(dialogue))
            rankings.update({system: [{pk} for pk in raw[system]] for system in BASELINES})
            outcome.rrf_top = [info[pk].external_id for pk in raw["rrf"][:DEPTH]]
            returned = set().union(*positions) if positions else set()
            floor = raw["rrf"][:FLOOR_CHECKED]
            outcome.floor_kept = sum(pk in returned for pk in floor) / len(floor) if floor else 1.0
            for system, ranking in rankings.items():
                outcome.scores[system] = {f"r@{k}": recall_all_at_k(ranking, gold, k) for k in KS}
                outcome.scores[system]["mrr"] = reciprocal_rank(ranking, gold, DEPTH)
        outcomes.append(outcome)
    return MemoryReport(
        outcomes=outcomes, notes_stored=Note.objects.filter(firm_id__in=imported.firm_ids).count(),
        messages=len(info), import_summary=imported.summary, strategy=strategy, embedder=embedder.name,
        seconds={"import": imported.seconds, "questions": round(time.perf_counter() - started, 1)},
    )


def _shortened(hit: Hit, width: int = 70) -> str:
    """A hit's text on one line, cut to ``width`` characters (for ``--show``)."""
    text = " ".join((hit.note.content if hit.note is not None else hit.message.content).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _leaks(hit: Hit, sources: set[int], user_id: int, firm_id: int, matter_ids: set[int],
           info: dict[int, _MessageInfo], forbidden: set[int]) -> list[str]:
    """Why this hit must not have reached the asker (empty when it may)."""
    note = getattr(hit, "note", None)
    if note is not None and note.firm_id != firm_id:
        return [f"another firm's note {note.pk}"]
    leaks = []
    if note is not None and note.memory_scope == MemoryScope.USER_PROFILE and note.owner_id != user_id:
        leaks.append(f"another user's profile note {note.pk}")
    if note is None and any(pk in info and info[pk].user_id != user_id for pk in sources):
        leaks.append(f"another user's raw message {sorted(sources)}")
    for pk in sorted(sources):
        message = info.get(pk)
        if message is None or message.firm_id != firm_id:
            leaks.append(f"message {pk} of another firm")
        elif message.matter_id is not None and message.matter_id not in matter_ids:
            leaks.append(f"message {message.external_id} of a matter the asker is not assigned to")
        elif pk in forbidden:
            leaks.append(f"message {message.external_id}: another user's must-not-recall evidence")
    return leaks
