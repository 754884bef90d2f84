"""The consultation set: Chinese legal consultations with some English, written in two parts
(``part_a/``, ``part_b/``) by authors who were given only the import format, the category list
and the issue — never the ranking code. ``split.json`` puts every question in dev or test; it
was written (``python -m showcase.evaluation.consultations.split``) before the product was run on
the set, and only the dev split is tuned on (docs/evaluation.md)."""
