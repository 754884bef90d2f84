"""Records management (docs/records.md): erasure, retention and legal hold, matter transfer
(export and import), the records lookup of the commands, their admin actions, views and
commands, and the scrub of recalled-note copies from saved replies. No models of its own: it
works on ``memory``'s and ``documents``' tables."""
