"""A navigation graph as served: the graph, what the page shows of each node, and its provenance."""
from __future__ import annotations

from dataclasses import dataclass, field

from navigation.graph import NavGraph


@dataclass
class NodeInfo:
    scope: str
    category: str
    matter_id: int | None
    event: str
    label: str
    importance: float


@dataclass
class BuiltGraph:
    """A navigation graph plus what the page shows of each node, for one visibility set.

    ``stamps`` maps every node's id to a fingerprint of what the graph uses of the note
    (navigation.selectors.STAMP_PARTS): comparing it with the current visible set gives the
    notes added, removed and changed since. ``stored``
    says the graph is the one kept in the database for its key and version (every process then
    serves the same graph)."""

    graph: NavGraph
    info: list[NodeInfo]
    version: str
    truncated: bool
    matter_titles: dict[int, str] = field(default_factory=dict)
    stamps: dict[str, str] = field(default_factory=dict)
    stored: bool = False
