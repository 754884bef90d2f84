"""A built navigation graph as bytes (for NavigationGraphSnapshot) and back.

One ``np.savez`` archive, read back with ``allow_pickle=False``: the ids and their
stamps, the vectors, levels, layout and its principal axes, the edges
(source, target, score, a bit mask of levels, bridge), and one JSON member with the version,
the parameters, each node's words and what the page shows of it. Everything in it comes from
the notes of the key's own visible set, nothing else. Not compressed: float32 vectors hardly
compress (10k × 384: 15.4 → 14.2 MB) and deflating them costs 0.5 s.
"""
from __future__ import annotations

import hashlib
import io
import json

import numpy as np

from navigation.built import BuiltGraph, NodeInfo
from navigation.graph import Edge, GraphParams, LayoutBasis, NavGraph, index_edges


def key_hash(fingerprint: tuple) -> str:
    """SHA-256 of the visibility fingerprint (firm, user, assigned matters, filters, parameters):
    a different visible set — e.g. after an assignment change — is a different key."""
    return hashlib.sha256(repr(fingerprint).encode("utf-8")).hexdigest()


def encode(built: BuiltGraph) -> bytes:
    graph = built.graph
    edges = graph.edges
    meta = {
        "version": built.version,
        "truncated": built.truncated,
        "params": graph.params.as_dict() | {"m": graph.params.m, "m0": graph.params.m0},
        "max_level": graph.max_level,
        "entry": graph.entry,
        "changes_since_build": graph.changes_since_build,
        "tokens": [sorted(words) for words in graph.tokens],
        "info": [[i.scope, i.category, i.matter_id, i.event, i.label, i.importance] for i in built.info],
    }
    basis = graph.basis
    arrays = {
        "ids": np.array(graph.ids, dtype=str),
        "stamps": np.array([built.stamps[note_id] for note_id in graph.ids], dtype=str),
        "vectors": graph.vectors,
        "levels": graph.levels.astype(np.int16),
        "layout": graph.layout,
        "importance": np.array(graph.importance, dtype=np.float64),
        "edge_source": np.array([e.source for e in edges], dtype=np.int32),
        "edge_target": np.array([e.target for e in edges], dtype=np.int32),
        "edge_score": np.array([e.score for e in edges], dtype=np.float64),
        "edge_levels": np.array([sum(1 << level for level in e.levels) for e in edges], dtype=np.int64),
        "edge_bridge": np.array([e.bridge for e in edges], dtype=bool),
        "meta": np.frombuffer(json.dumps(meta, ensure_ascii=False).encode("utf-8"), dtype=np.uint8),
    }
    if basis is not None:
        arrays |= {"centre": basis.centre, "axes": basis.axes, "projection": basis.projection}
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


def decode(data: bytes, *, matter_titles: dict[int, str]) -> BuiltGraph:
    archive = np.load(io.BytesIO(bytes(data)), allow_pickle=False)
    meta = json.loads(archive["meta"].tobytes().decode("utf-8"))
    stored = meta["params"]
    params = GraphParams(m=stored["m"], m0=stored["m0"], ef_search=stored["EF_SEARCH"],
                         lexical_weight=stored["lexical_weight"], candidates=stored["candidates_per_node"])
    ids = archive["ids"].tolist()
    max_level = int(meta["max_level"])
    masks = archive["edge_levels"].tolist()
    edges = [
        Edge(source, target, score, [level for level in range(max_level + 1) if mask >> level & 1], bridge)
        for source, target, score, mask, bridge in zip(
            archive["edge_source"].tolist(), archive["edge_target"].tolist(), archive["edge_score"].tolist(),
            masks, archive["edge_bridge"].tolist(),
        )
    ]
    layout = archive["layout"]
    basis = (
        LayoutBasis(archive["centre"], archive["axes"], archive["projection"]) if "centre" in archive.files else None
    )
    n = len(ids)
    graph = NavGraph(
        params=params,
        ids=ids,
        index_of={note_id: i for i, note_id in enumerate(ids)},
        vectors=archive["vectors"],
        tokens=[frozenset(words) for words in meta["tokens"]],
        levels=archive["levels"].astype(np.int64),
        max_level=max_level,
        entry=int(meta["entry"]),
        edges=edges,
        adjacency=index_edges(edges, max_level),
        layout=layout,
        order=np.lexsort((np.arange(n), layout[:, 0])) if n else np.zeros(0, dtype=np.int64),
        importance=archive["importance"].tolist(),
        basis=basis,
        changes_since_build=int(meta["changes_since_build"]),
    )
    info = [NodeInfo(scope, category, matter, event, label, float(importance))
            for scope, category, matter, event, label, importance in meta["info"]]
    stamps = dict(zip(ids, archive["stamps"].tolist()))
    return BuiltGraph(graph, info, meta["version"], bool(meta["truncated"]), matter_titles, stamps, stored=True)
