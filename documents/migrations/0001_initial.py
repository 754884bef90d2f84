# The documents app takes over its models from ``memory`` (issue 53: one app per feature).
# The rows stay where they are: the three tables are renamed (memory_document →
# documents_document, …, with their id sequences) and the content types follow, so permissions
# and admin history keep pointing at them. Django's state gets the models as they were in
# ``memory`` (``memory.0032_documents_moved_out`` removed them there, state only). Reversible:
# migrating back renames the tables and content types back (tests/documents/test_app_migration.py).

import django.contrib.postgres.indexes
import django.contrib.postgres.search
import django.db.models.deletion
import pgvector.django.vector
from django.conf import settings
from django.db import migrations, models

TABLES = ("document", "documentpage", "documentchunk")


def _rename_tables(old: str, new: str) -> str:
    """SQL renaming the three tables, and their id sequences, from app ``old`` to ``new``."""
    return "\n".join(
        f"ALTER TABLE {old}_{table} RENAME TO {new}_{table};\n"
        f"ALTER SEQUENCE IF EXISTS {old}_{table}_id_seq RENAME TO {new}_{table}_id_seq;"
        for table in TABLES
    )


def _move_content_types(old: str, new: str):
    """A RunPython function giving the models' content types to app ``new`` (one that already
    exists there is kept, and the old one left as a stale type)."""
    def move(apps, schema_editor) -> None:
        content_types = apps.get_model("contenttypes", "ContentType")
        db = schema_editor.connection.alias
        for model in TABLES:
            if not content_types.objects.using(db).filter(app_label=new, model=model).exists():
                content_types.objects.using(db).filter(app_label=old, model=model).update(app_label=new)
    return move


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ('memory', '0032_documents_moved_out'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
        ('contenttypes', '0002_remove_content_type_name'),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name='Document',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('filename', models.CharField(max_length=255, verbose_name='file name')),
                        ('title', models.CharField(max_length=255, verbose_name='title')),
                        ('kind', models.CharField(blank=True, choices=[('pdf', 'PDF'), ('image', 'image'), ('docx', 'Word document'), ('email', 'e-mail'), ('text', 'text')], max_length=10, verbose_name='kind')),
                        ('sha256', models.CharField(db_index=True, max_length=64, verbose_name='SHA-256')),
                        ('size_bytes', models.BigIntegerField(verbose_name='size (bytes)')),
                        ('status', models.CharField(choices=[('queued', 'queued'), ('extracting', 'extracting'), ('ocr', 'OCR'), ('indexed', 'indexed'), ('failed', 'failed')], default='queued', max_length=12, verbose_name='status')),
                        ('error', models.CharField(blank=True, max_length=500, verbose_name='error')),
                        ('attempts', models.PositiveIntegerField(default=0, verbose_name='attempts')),
                        ('page_count', models.PositiveIntegerField(default=0, verbose_name='pages')),
                        ('ocr_pages', models.PositiveIntegerField(default=0, verbose_name='pages read by OCR')),
                        ('headers', models.JSONField(blank=True, default=dict, verbose_name='e-mail headers')),
                        ('uploaded_at', models.DateTimeField(auto_now_add=True, verbose_name='uploaded at')),
                        ('indexed_at', models.DateTimeField(blank=True, null=True, verbose_name='indexed at')),
                        ('started_at', models.DateTimeField(blank=True, null=True, verbose_name='started at')),
                        ('worker_host', models.CharField(blank=True, max_length=255, verbose_name='worker host')),
                        ('worker_pid', models.PositiveIntegerField(blank=True, null=True, verbose_name='worker pid')),
                        ('heartbeat_at', models.DateTimeField(blank=True, null=True, verbose_name='heartbeat at')),
                        ('firm', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='documents', to='memory.firm', verbose_name='firm')),
                        ('matter', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='documents', to='memory.matter', verbose_name='matter')),
                        ('parent', models.ForeignKey(blank=True, help_text='The e-mail this file was attached to.', null=True, on_delete=django.db.models.deletion.CASCADE, related_name='attachments', to='documents.document', verbose_name='attached to')),
                        ('uploaded_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='uploaded by')),
                    ],
                    options={
                        'verbose_name': 'document',
                        'verbose_name_plural': 'documents',
                        'ordering': ['-uploaded_at', '-id'],
                    },
                ),
                migrations.CreateModel(
                    name='DocumentPage',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('number', models.PositiveIntegerField(verbose_name='page')),
                        ('text', models.TextField(blank=True, verbose_name='text')),
                        ('by_ocr', models.BooleanField(default=False, verbose_name='read by OCR')),
                        ('document', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='pages', to='documents.document', verbose_name='document')),
                    ],
                    options={
                        'verbose_name': 'document page',
                        'verbose_name_plural': 'document pages',
                        'ordering': ['document', 'number'],
                    },
                ),
                migrations.CreateModel(
                    name='DocumentChunk',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('ordinal', models.PositiveIntegerField(verbose_name='position in the document')),
                        ('start', models.PositiveIntegerField(verbose_name='start offset in the page')),
                        ('end', models.PositiveIntegerField(verbose_name='end offset in the page')),
                        ('heading', models.CharField(blank=True, max_length=300, verbose_name='heading')),
                        ('text', models.TextField(verbose_name='text')),
                        ('search_text', models.TextField(blank=True, editable=False, verbose_name='search text')),
                        ('search_vector', models.GeneratedField(db_persist=True, expression=django.contrib.postgres.search.SearchVector('search_text', config='english'), output_field=django.contrib.postgres.search.SearchVectorField(), verbose_name='search vector')),
                        ('embedding', pgvector.django.vector.VectorField(blank=True, dimensions=384, null=True, verbose_name='embedding')),
                        ('embedding_model', models.CharField(blank=True, max_length=100, verbose_name='embedding model')),
                        ('document', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chunks', to='documents.document', verbose_name='document')),
                        ('matter', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.matter', verbose_name='matter')),
                        ('page', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='chunks', to='documents.documentpage', verbose_name='page')),
                    ],
                    options={
                        'verbose_name': 'document chunk',
                        'verbose_name_plural': 'document chunks',
                        'ordering': ['document', 'ordinal'],
                    },
                ),
                migrations.AddIndex(
                    model_name='document',
                    index=models.Index(fields=['matter', '-uploaded_at'], name='document_matter_uploaded'),
                ),
                migrations.AddConstraint(
                    model_name='documentpage',
                    constraint=models.UniqueConstraint(fields=('document', 'number'), name='document_page_unique'),
                ),
                migrations.AddIndex(
                    model_name='documentchunk',
                    index=django.contrib.postgres.indexes.GinIndex(fields=['search_vector'], name='document_chunk_search_gin'),
                ),
                migrations.AddIndex(
                    model_name='documentchunk',
                    index=models.Index(fields=['matter'], include=('id', 'embedding'), name='document_chunk_matter_vectors'),
                ),
            ],
            database_operations=[
                migrations.RunSQL(_rename_tables("memory", "documents"), _rename_tables("documents", "memory")),
                migrations.RunPython(_move_content_types("memory", "documents"),
                                     _move_content_types("documents", "memory")),
            ],
        ),
    ]
