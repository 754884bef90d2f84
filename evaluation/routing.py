"""Routing quality on the labelled pairs in ``routing_pairs.json``.

Each pair is an active note (``old``) and a new statement (``new``) about one matter; its
label is the action routing should take for the new one (update / add / ignore). Every
pair gets its own matter in a throw-away firm, the old note is stored with its real
embedding, and the new statement goes through the real routing path
(``route_and_write``: pgvector neighbours, slot comparison, the write). By default all of
it runs inside one transaction that is rolled back: the database is left as it was.

The figure that matters is supersede precision — a false UPDATE hides a fact from the
user — and the false-supersession rate over pairs that must not supersede. The set is
split: every third pair of each language is held out (``held_out``) and was not looked at
while the rules were tuned; the report gives both halves.
"""
from __future__ import annotations

import json
import uuid
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Callable

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from infra.embeddings import get_embedder
from memory.models import MemoryScope, Role, SourceType
from memory.services.tenancy import assign_user, create_firm, create_matter, set_membership
from remember.routing import route_and_write
from memory.services.notes import NoteDraft, create_note

PAIRS = Path(__file__).with_name("routing_pairs.json")
ACTOR = "system:evaluate_routing"
ACTIONS = ("update", "add", "ignore")


class PairsError(ValueError):
    """The pairs file is not in the documented format."""


@dataclass
class PairOutcome:
    id: str
    kind: str
    lang: str
    held_out: bool
    expected: str
    got: str
    reason: str
    similarity: float | None
    old: str
    new: str

    @property
    def correct(self) -> bool:
        return self.expected == self.got


@dataclass
class Scores:
    """Supersede precision / recall and the confusion table of one slice of the pairs."""

    outcomes: list[PairOutcome] = field(default_factory=list)

    @property
    def confusion(self) -> Counter:
        return Counter((o.expected, o.got) for o in self.outcomes)

    @property
    def supersede_precision(self) -> float | None:
        predicted = sum(1 for o in self.outcomes if o.got == "update")
        return None if not predicted else sum(1 for o in self.outcomes if o.got == o.expected == "update") / predicted

    @property
    def supersede_recall(self) -> float | None:
        wanted = sum(1 for o in self.outcomes if o.expected == "update")
        return None if not wanted else sum(1 for o in self.outcomes if o.got == o.expected == "update") / wanted

    @property
    def false_supersession_rate(self) -> float | None:
        """Share of pairs that must not supersede (add / ignore) that did."""
        keep = [o for o in self.outcomes if o.expected != "update"]
        return None if not keep else sum(1 for o in keep if o.got == "update") / len(keep)

    @property
    def accuracy(self) -> float | None:
        return None if not self.outcomes else sum(o.correct for o in self.outcomes) / len(self.outcomes)


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


@dataclass
class RoutingReport:
    outcomes: list[PairOutcome]

    def slice(self, *, held_out: bool | None = None, lang: str | None = None) -> Scores:
        return Scores([o for o in self.outcomes if (held_out is None or o.held_out == held_out)
                       and (lang is None or o.lang == lang)])

    def lines(self) -> list[str]:
        """The printed report: figures per slice, the confusion table, every wrong pair."""
        out = [f"routing pairs: {len(self.outcomes)} "
               f"({sum(o.lang == 'zh' for o in self.outcomes)} zh, {sum(o.lang == 'en' for o in self.outcomes)} en; "
               f"{sum(o.held_out for o in self.outcomes)} held out)"]
        out.append(f"{'slice':<10} {'pairs':>5} {'precision':>9} {'recall':>7} {'false-sup':>9} {'accuracy':>8}")
        for label, scores in (("all", self.slice()), ("tuning", self.slice(held_out=False)),
                              ("held-out", self.slice(held_out=True)), ("zh", self.slice(lang="zh")),
                              ("en", self.slice(lang="en"))):
            out.append(f"{label:<10} {len(scores.outcomes):>5} {_pct(scores.supersede_precision):>9} "
                       f"{_pct(scores.supersede_recall):>7} {_pct(scores.false_supersession_rate):>9} "
                       f"{_pct(scores.accuracy):>8}")
        confusion = self.slice().confusion
        out.append("confusion (rows expected, columns routed):")
        out.append(f"  {'':<8}" + "".join(f"{a:>8}" for a in ACTIONS))
        for expected in ACTIONS:
            out.append(f"  {expected:<8}" + "".join(f"{confusion[(expected, got)]:>8}" for got in ACTIONS))
        by_kind = Counter(o.kind for o in self.outcomes)
        wrong_by_kind = Counter(o.kind for o in self.outcomes if not o.correct)
        out.append("by kind: " + ", ".join(f"{k} {by_kind[k] - wrong_by_kind[k]}/{by_kind[k]}" for k in sorted(by_kind)))
        wrong = [o for o in self.outcomes if not o.correct]
        out.append(f"wrong pairs: {len(wrong)}")
        for o in wrong:
            out.append(f"  {o.id}{' (held out)' if o.held_out else ''} [{o.kind}] expected {o.expected}, "
                       f"routed {o.got}: {o.reason}")
            out.append(f"      old: {o.old}")
            out.append(f"      new: {o.new}")
        return out


def load_pairs(path: str | Path = PAIRS) -> dict[str, Any]:
    """Read and check the pairs file; raise PairsError naming the first bad pair."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list) or not data["pairs"]:
        raise PairsError("the file must be an object with a non-empty 'pairs' list")
    seen: set[str] = set()
    for index, pair in enumerate(data["pairs"]):
        where = f"pairs[{index}]"
        if not isinstance(pair, dict):
            raise PairsError(f"{where}: must be an object")
        for key in ("id", "kind", "lang", "old", "new", "expected"):
            if not isinstance(pair.get(key), str) or not pair[key].strip():
                raise PairsError(f"{where}: missing {key!r} text")
        if pair["expected"] not in ACTIONS:
            raise PairsError(f"{where}: expected must be one of {', '.join(ACTIONS)}, got {pair['expected']!r}")
        if pair["id"] in seen:
            raise PairsError(f"{where}: id {pair['id']!r} appears twice")
        seen.add(pair["id"])
    return data


def evaluate_routing(
    data: dict[str, Any] | None = None,
    *,
    keep: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> RoutingReport:
    """Route every pair through the real write path in a throw-away firm (rolled back unless
    ``keep``) and return the outcomes."""
    data = data if data is not None else load_pairs()
    with transaction.atomic():
        report = _evaluate(data, progress=progress)
        if not keep:
            transaction.set_rollback(True)
    return report


def _evaluate(data: dict[str, Any], *, progress: Callable[[int, int], None] | None) -> RoutingReport:
    defaults = {"category": "fact", "old_confidence": 0.8, "new_confidence": 0.8, **data.get("defaults", {})}
    suffix = uuid.uuid4().hex[:8]
    firm = create_firm(name=f"eval routing {suffix}", slug=f"eval-routing-{suffix}", actor=ACTOR)
    user = get_user_model().objects.create_user(username=f"eval-routing-{suffix}")
    set_membership(firm=firm, user=user, role=Role.LAWYER, actor=ACTOR)
    pairs = data["pairs"]
    vectors = get_embedder().embed_passages([text for p in pairs for text in (p["old"], p["new"])])
    said = timezone.now() - timedelta(days=1)
    outcomes = []
    for index, pair in enumerate(pairs):
        spec = {**defaults, **pair}
        matter = create_matter(firm=firm, title=f"routing pair {pair['id']}", reference=pair["id"][:80], actor=ACTOR)
        assign_user(matter=matter, user=user, actor=ACTOR)

        def draft(text: str, confidence: float, at, source_id: str, turn_words: str = "") -> NoteDraft:
            return NoteDraft(firm=firm, content=text, memory_scope=MemoryScope.CASE, category=spec["category"],
                             source_type=SourceType.IMPORT, confidence=float(confidence), matter=matter,
                             owner=user, source_id=source_id, said_at=at, said=turn_words)

        create_note(draft(pair["old"], spec["old_confidence"], said, f"{pair['id']}:old"), actor=ACTOR,
                    embedding=vectors[2 * index])
        decision = route_and_write(
            draft(pair["new"], spec["new_confidence"], said + timedelta(hours=1), f"{pair['id']}:new",
                  pair.get("said", "")),
            vectors[2 * index + 1], actor=ACTOR, source_key=f"eval-routing:{suffix}:{pair['id']}"[:64],
            item_index=0,
        )
        outcomes.append(PairOutcome(
            id=pair["id"], kind=pair["kind"], lang=pair["lang"], held_out=bool(pair.get("held_out")),
            expected=pair["expected"], got=decision.action, reason=decision.reason,
            similarity=decision.similarity, old=pair["old"], new=pair["new"],
        ))
        if progress:
            progress(index + 1, len(pairs))
    return RoutingReport(outcomes)
