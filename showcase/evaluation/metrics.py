"""Ranking metrics shared by the evaluation commands: recall_all@k, reciprocal rank, RRF.

A ranking is a list of positions; each position holds the message ids it covers (one for a
raw-message baseline, the source messages for a note). Gold is the set of evidence messages.
"""
from __future__ import annotations

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
