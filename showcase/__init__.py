"""The demo and measurement tooling around the product: the month-long story that fills a new
install with real notes (``story``, ``manage.py generate_story``) and the evaluations that
measure recall against the raw conversation (``evaluation``, ``manage.py evaluate_*``).

It depends on ``memory`` and never the reverse (tests/site/test_import_graph.py): the product's
core stays readable without it (docs/architecture.md)."""
