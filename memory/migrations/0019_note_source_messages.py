"""A GIN index on each note's provenance (``source_message_ids``): the notes a message became,
for a search's explicit reference to what was said (``candidates.notes_from_messages``) and for
erasure. docs/performance.md, "Sixth round"."""

import django.contrib.postgres.indexes
from django.conf import settings
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0018_note_vector_versions'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddIndex(
            model_name='note',
            index=django.contrib.postgres.indexes.GinIndex(fields=['source_message_ids'], name='note_source_messages_gin'),
        ),
    ]
