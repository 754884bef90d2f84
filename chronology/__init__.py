"""A matter's chronology (案件时间线): its facts on a time axis by when they held, each with its
source one click away, superseded values struck through with when and by whom they were
replaced, contradicting values side by side; printable, exportable as Markdown and CSV, and the
same through the REST API; "as of" a date shows it as the firm's memory stood then, "valid at" a
date the facts that held in the world then; the matter's documents sit at their upload
(docs/chronology.md)."""
