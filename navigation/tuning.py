"""Tuning constants of the navigation graph (the HNSW-style graph of navigation/graph.py).

They shape the graph every user sees, so they are code, changed by a commit together with the
benchmark that justifies them (bench/bench_navigation.py) — not deployment settings. Tests that
need another value monkeypatch this module (docs/refactor-a.md). Sizes, cache and refresh
timing stay deployment settings (``NAV_MAX_NOTES``, ``NAV_CACHE_ENTRIES``, ...).
"""
from __future__ import annotations

#: Max degree per upper level; promotion probability 1/M.
NAV_M = 4
#: Max degree on L0 (seed: M0 = M).
NAV_M0 = NAV_M
#: L0 beam width: ef = max(k, NAV_EF_SEARCH).
NAV_EF_SEARCH = 16
#: λ in (1-λ)·cosine + λ·Jaccard.
NAV_LEXICAL_WEIGHT = 0.25
#: Vector neighbour candidates per node.
NAV_CANDIDATES = 8
#: Beam width when a note is inserted into an existing graph.
NAV_EF_CONSTRUCTION = 32
#: A change larger than this fraction of the graph (notes removed + added) → full build.
NAV_REBUILD_FRACTION = 0.2
