"""The firm-wide layers share one partial HNSW index again: migration 0027 is undone.

0027 gave each firm its own index over its firm-wide notes. Each firm's walk then recalled more,
in less time. But PostgreSQL opens, locks and weighs every index of a table for every statement
on it, and these indexes grew with the number of firms. On the 100k bench database the search's
note statement took 2.5 ms to plan with 50 firms (1.0 ms with 3), 12.6 ms with 300, and a
search took ~10 ms longer with 50 firms. Every other read and write of ``memory_note`` paid
too. docs/performance.md, "Why the firm-wide layers share one index".

Forward: the shared index is built first (so the firm-wide walk always has an index), then the
triggers, every firm's index and the functions go. Backward: they are built again.
"""
import importlib

from django.db import migrations, models
from pgvector.django import HnswIndex

FIRM_WIDE_SCOPES = ["cross_case", "general_law", "global"]

# 0027's own SQL both ways: its undoing (triggers, every firm's index, functions) forward, its
# building backward.
PER_FIRM_INDEXES = importlib.import_module("memory.migrations.0027_firm_note_indexes")


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0027_firm_note_indexes"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="note",
            index=HnswIndex(
                condition=models.Q(memory_scope__in=FIRM_WIDE_SCOPES, status="active"),
                ef_construction=64,
                fields=["embedding"],
                m=16,
                name="note_embedding_firmwide_hnsw",
                opclasses=["vector_cosine_ops"],
            ),
        ),
        migrations.RunSQL(PER_FIRM_INDEXES.BACKWARD, PER_FIRM_INDEXES.FORWARD),
    ]
