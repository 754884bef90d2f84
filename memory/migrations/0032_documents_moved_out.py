# Documents, their pages and chunks move to the ``documents`` app (issue 53: one app per
# feature). Only Django's state changes here: the tables stay, and ``documents.0001_initial``
# (which depends on this migration) renames them and takes the models over. Reversible.

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0031_audit_conversation_exported'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveField(
                    model_name='documentpage',
                    name='document',
                ),
                migrations.RemoveField(
                    model_name='documentchunk',
                    name='document',
                ),
                migrations.RemoveField(
                    model_name='documentchunk',
                    name='matter',
                ),
                migrations.RemoveField(
                    model_name='documentchunk',
                    name='page',
                ),
                migrations.DeleteModel(
                    name='Document',
                ),
                migrations.DeleteModel(
                    name='DocumentChunk',
                ),
                migrations.DeleteModel(
                    name='DocumentPage',
                ),
            ],
            database_operations=[],
        ),
    ]
