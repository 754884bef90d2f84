"""Tuning constants of the navigation graph (the HNSW-style graph of navigation/graph.py).

They shape the graph every user sees, so they are code, changed by a commit together with the
benchmark that justifies them (bench/bench_navigation.py) — not deployment settings. Tests that
need another value monkeypatch this module. Its sizes, cache and refresh timing are here too.
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

# Sizes and timing (docs/navigation.md; bench/bench_navigation.py times a 10,000-note graph).
#: Notes per graph (most recent first; the page says when it is truncated).
NAV_MAX_NOTES = 20000
#: Built graphs kept per server process (docs/performance.md, "Memory").
NAV_CACHE_ENTRIES = 8
#: Largest L0 page of the graph API.
NAV_L0_PAGE_MAX = 5000
#: Stored graphs unused for this long are dropped.
NAV_SNAPSHOT_TTL_DAYS = 14.0
