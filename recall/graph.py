"""Graph expansion over typed note links (AdaMem graph memory; docs/read-path.md, Graph expansion).

Seeds are the top-5 fused notes. From each seed, relatedness spreads along *visible*
links (``NoteLink.objects.visible_to(user)``: both ends visible) for at most 3 hops,
treating links as undirected::

    relatedness(child) = relatedness(parent) · 0.85 · priority(link_type)

with priority supports 1.0 > mentions 0.9 > temporal_next 0.8 > same_matter 0.7 >
semantic 0.65 > contradicts 0.6 > supersedes 0.5, a seed starting at its own strength
(its fused score divided by the best seed's). Notes with confidence < 0.6 are pruned
(neither reached nor expanded through), as are notes outside the planned layers or
not active. A note's ``graph`` score is the best relatedness that reaches it from a
seed *other than itself*. Reads only: one query per hop for links, one for new notes.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Sequence
from uuid import UUID

import numpy as np
from django.contrib.auth import get_user_model
from django.db import connection
from pgvector.django import CosineDistance

from memory.models import LinkType, NoteLink
from recall.layer_rules import searchable_notes
from recall.note_candidate import NoteCandidate
from recall.plan import RetrievalPlan
from recall.reach import Reach

SEED_COUNT = 5
DECAY_PER_HOP = 0.85
MAX_HOPS = 3
MIN_CONFIDENCE = 0.6
MAX_NEW_NODES = 200
EDGE_PRIORITY: dict[str, float] = {
    LinkType.SUPPORTS: 1.0,
    LinkType.MENTIONS: 0.9,
    LinkType.TEMPORAL_NEXT: 0.8,
    LinkType.SAME_MATTER: 0.7,
    LinkType.SEMANTIC: 0.65,
    LinkType.CONTRADICTS: 0.6,
    LinkType.SUPERSEDES: 0.5,
}
DEFAULT_PRIORITY = 0.5


@dataclass
class GraphReach:
    """How a note was reached: relatedness, hops, from which seed and over which link types."""

    score: float
    hops: int
    seed_id: UUID
    path_types: list[str] = field(default_factory=list)


@dataclass
class Expansion:
    reach: dict[UUID, GraphReach]
    new_candidates: dict[UUID, NoteCandidate]
    links_read: int


def expand(
    user,
    plan: RetrievalPlan,
    reach_ids: Reach,
    seeds: Sequence[tuple[UUID, float]],
    known: dict[UUID, NoteCandidate],
    vector: np.ndarray,
) -> Expansion:
    """Spread from ``seeds`` ((note id, strength)) over visible links; fetch newly reached notes."""
    seeds = list(seeds)[:SEED_COUNT]
    if not seeds:
        return Expansion({}, {}, 0)
    allowed = None  # the notes a hop may add: built when a link first reaches an unknown note
    adjacency: dict[UUID, list[tuple[UUID, str]]] = {}
    frontier = {seed_id for seed_id, _ in seeds}
    seen = set(frontier)
    links_read = 0
    nodes: dict[UUID, NoteCandidate] = {}
    for _hop in range(MAX_HOPS):
        if not frontier:
            break
        links = _links_touching(user, reach_ids, frontier)
        links_read += len(links)
        reached = set()
        for source_id, target_id, link_type in links:
            adjacency.setdefault(source_id, []).append((target_id, link_type))
            adjacency.setdefault(target_id, []).append((source_id, link_type))
            reached.update((source_id, target_id))
        unknown = [node for node in reached - seen if node not in known][:MAX_NEW_NODES]
        if unknown:
            if allowed is None:
                allowed = searchable_notes(user, plan, reach_ids).filter(confidence__gte=MIN_CONFIDENCE)
            for note in allowed.filter(pk__in=unknown).annotate(
                distance=CosineDistance("embedding", vector)
            ):
                nodes[note.pk] = NoteCandidate(
                    note=note, distance=None if note.distance is None else float(note.distance)
                )
        eligible = {
            node
            for node in reached - seen
            if node in nodes or (node in known and known[node].note.confidence >= MIN_CONFIDENCE)
        }
        seen |= reached
        frontier = eligible
    passable = set(nodes) | {node for node, c in known.items() if c.note.confidence >= MIN_CONFIDENCE}
    reach: dict[UUID, GraphReach] = {}
    for seed_id, strength in seeds:
        _spread(seed_id, strength, adjacency, passable, reach)
    return Expansion(reach=reach, new_candidates=nodes, links_read=links_read)


def _links_touching(user, reach_ids: Reach, frontier: set[UUID]) -> list[tuple[UUID, UUID, str]]:
    """The visible links (``NoteLink.objects.visible_to``) with an end in ``frontier``, at most
    ``MAX_NEW_NODES * 4``: the rule compiled once per user and reach (``_visible_links``), the
    frontier a parameter."""
    if not user.is_authenticated:
        return []
    sql, params = _visible_links(user.pk, reach_ids)
    ids = [str(node) for node in frontier]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT v.source_id, v.target_id, v.link_type FROM ({sql}) v "
            "WHERE v.source_id = ANY(%s::uuid[]) OR v.target_id = ANY(%s::uuid[]) LIMIT %s",
            [*params, ids, ids, MAX_NEW_NODES * 4],
        )
        return cursor.fetchall()


@functools.lru_cache(maxsize=4096)
def _visible_links(user_id: int, reach_ids: Reach) -> tuple[str, tuple]:
    """``NoteLink.objects.visible_to`` for one user and reach, compiled once per process
    (building the rule's querysets costs more than the read; the rule runs in the database)."""
    links = NoteLink.objects.visible_to(get_user_model()(pk=user_id), **reach_ids.literals())
    return links.order_by().values_list("source_id", "target_id", "link_type").query.sql_with_params()


def _spread(
    seed_id: UUID,
    strength: float,
    adjacency: dict[UUID, list[tuple[UUID, str]]],
    passable: set[UUID],
    reach: dict[UUID, GraphReach],
) -> None:
    """Best-first relaxation from one seed, ≤ MAX_HOPS hops; keeps each node's best reach."""
    best: dict[UUID, tuple[float, int, list[str]]] = {seed_id: (strength, 0, [])}
    layer = [seed_id]
    for hop in range(1, MAX_HOPS + 1):
        next_layer: list[UUID] = []
        for node in layer:
            node_score, _, path = best[node]
            for neighbour, link_type in adjacency.get(node, ()):
                if neighbour not in passable or neighbour == seed_id:
                    continue
                value = node_score * DECAY_PER_HOP * EDGE_PRIORITY.get(link_type, DEFAULT_PRIORITY)
                if value > best.get(neighbour, (0.0, 0, []))[0]:
                    best[neighbour] = (value, hop, [*path, link_type])
                    next_layer.append(neighbour)
        layer = next_layer
    for node, (value, hops, path) in best.items():
        if node == seed_id:
            continue
        current = reach.get(node)
        if current is None or value > current.score:
            reach[node] = GraphReach(score=round(value, 4), hops=hops, seed_id=seed_id, path_types=path)
