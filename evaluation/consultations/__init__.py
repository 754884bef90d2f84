"""The consultation set: Chinese legal consultations with some English, written in three parts
(``part_a/``, ``part_b/`` together; ``part_c/``, English-heavy, later) by authors who were given
only the import format, the category list and the issue — never the ranking code. Each part's
hand-written data is its ``source.json``; ``build.py`` (one builder for every part) checks it and
writes the part's ``world.json``, ``transcript-<firm>.json`` and ``questions.json``.
``split.json`` puts every question in dev or test; each batch of parts was split
(``python -m evaluation.consultations.split``) before the product was run on it, and
only the dev split is tuned on (docs/evaluation.md)."""
