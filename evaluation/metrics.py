"""Ranking metrics shared by the evaluation commands: recall_all@k, reciprocal rank, RRF.

A ranking is a list of positions; each position holds the message ids it covers (one for a
raw-message baseline, the source messages for a note). Gold is the set of evidence messages.
"""
from __future__ import annotations

import random
from collections.abc import Hashable, Iterable, Sequence

RRF_K = 60


def recall_all_at_k(ranking: Sequence[Iterable[int]], gold: set[int], k: int) -> float:
    """1.0 when every gold message is covered by the first ``k`` positions, else 0.0."""
    if not gold:
        raise ValueError("recall_all needs at least one gold message")
    covered: set[int] = set()
    for position in ranking[:k]:
        covered.update(position)
    return 1.0 if gold <= covered else 0.0


def recall_at_k(ranking: Sequence[Iterable[int]], gold: set[int], k: int) -> float:
    """The share of gold messages covered by the first ``k`` positions."""
    if not gold:
        raise ValueError("recall needs at least one gold message")
    covered: set[int] = set()
    for position in ranking[:k]:
        covered.update(position)
    return len(gold & covered) / len(gold)


def reciprocal_rank(ranking: Sequence[Iterable[int]], gold: set[int], depth: int | None = None) -> float:
    """1 / the rank of the first position covering any gold message (0 when none within ``depth``)."""
    for rank, position in enumerate(ranking[:depth] if depth else ranking, start=1):
        if gold.intersection(position):
            return 1.0 / rank
    return 0.0


def rrf_fuse(rankings: Iterable[Sequence[Hashable]], k: int = RRF_K) -> list[Hashable]:
    """Reciprocal rank fusion: score(d) = Σ 1 / (k + rank); ties keep first-seen order."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + 1.0 / (k + rank)
    order = {item: index for index, item in enumerate(scores)}
    return sorted(scores, key=lambda item: (-scores[item], order[item]))


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return round(sum(values) / len(values), 4) if values else 0.0


def paired_bootstrap(differences: Sequence[float], *, draws: int = 2000, seed: int = 0,
                     level: float = 0.95) -> tuple[float, float, float]:
    """The mean of per-question ``differences`` (product minus a baseline) and its ``level``
    interval by a paired bootstrap: ``draws`` resamples of the questions with replacement, the
    same seed every run (the same figures twice). An interval that holds 0 says the data cannot
    tell the two apart: on a category of 2–10 questions one question moving one place is enough
    to flip its sign."""
    if not differences:
        raise ValueError("a bootstrap needs at least one question")
    values = list(differences)
    count = len(values)
    rng = random.Random(seed)
    means = sorted(sum(rng.choices(values, k=count)) / count for _ in range(draws))
    tail = (1.0 - level) / 2
    low, high = means[int(tail * draws)], means[min(draws - 1, int((1.0 - tail) * draws))]
    return round(sum(values) / count, 4), round(low, 4), round(high, 4)
