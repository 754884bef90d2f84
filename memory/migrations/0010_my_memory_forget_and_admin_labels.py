# Forgotten notes (status and audit event) and translated verbose names for the admin (docs/my-memory-and-admin.md).

import django.contrib.postgres.fields
import django.contrib.postgres.search
import django.db.models.deletion
import django.utils.timezone
import pgvector.django.vector
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0009_message_recall_plan'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='auditlog',
            name='actor',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='actor'),
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='after',
            field=models.JSONField(blank=True, null=True, verbose_name='after'),
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='before',
            field=models.JSONField(blank=True, null=True, verbose_name='before'),
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='created_at',
            field=models.DateTimeField(db_index=True, default=django.utils.timezone.now, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='event_type',
            field=models.CharField(choices=[('note_created', 'note created'), ('note_updated', 'note updated'), ('note_evolved', 'note evolved'), ('note_superseded', 'note superseded'), ('note_deleted', 'note deleted'), ('note_forgotten', 'note forgotten by its user'), ('link_created', 'link created'), ('link_deleted', 'link deleted'), ('matter_created', 'matter created'), ('matter_updated', 'matter updated'), ('matter_assigned', 'user assigned to matter'), ('matter_unassigned', 'user removed from matter'), ('membership_changed', 'membership changed'), ('membership_removed', 'membership removed'), ('firm_created', 'firm created'), ('job_failed', 'background job failed')], max_length=40, verbose_name='event'),
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='extra',
            field=models.JSONField(blank=True, default=dict, verbose_name='extra'),
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='firm',
            field=models.ForeignKey(db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='matter',
            field=models.ForeignKey(blank=True, db_constraint=False, null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to='memory.matter', verbose_name='matter'),
        ),
        migrations.AlterField(
            model_name='auditlog',
            name='private_to',
            field=models.ForeignKey(blank=True, db_constraint=False, help_text='Set when the object is visible to one user only (their profile notes).', null=True, on_delete=django.db.models.deletion.DO_NOTHING, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='private to'),
        ),
        migrations.AlterField(
            model_name='consolidatedmessage',
            name='consolidated_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='consolidated at'),
        ),
        migrations.AlterField(
            model_name='consolidatedmessage',
            name='consolidation',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='messages', to='memory.consolidation', verbose_name='consolidation'),
        ),
        migrations.AlterField(
            model_name='consolidatedmessage',
            name='message',
            field=models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, primary_key=True, related_name='consolidated', serialize=False, to='memory.message', verbose_name='message'),
        ),
        migrations.AlterField(
            model_name='consolidation',
            name='conversation',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='consolidations', to='memory.conversation', verbose_name='conversation'),
        ),
        migrations.AlterField(
            model_name='consolidation',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='consolidation',
            name='decisions',
            field=models.JSONField(blank=True, default=list, verbose_name='decisions'),
        ),
        migrations.AlterField(
            model_name='consolidation',
            name='engine',
            field=models.CharField(blank=True, max_length=200, verbose_name='engine'),
        ),
        migrations.AlterField(
            model_name='consolidation',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='consolidation',
            name='items',
            field=models.JSONField(blank=True, default=list, verbose_name='items'),
        ),
        migrations.AlterField(
            model_name='conversation',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='conversation',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='conversations', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='conversation',
            name='matter',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='conversations', to='memory.matter', verbose_name='matter'),
        ),
        migrations.AlterField(
            model_name='conversation',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='conversation',
            name='user',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='conversations', to=settings.AUTH_USER_MODEL, verbose_name='user'),
        ),
        migrations.AlterField(
            model_name='firm',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='llmservermode',
            name='base_url',
            field=models.CharField(max_length=500, verbose_name='base url'),
        ),
        migrations.AlterField(
            model_name='llmservermode',
            name='json_mode',
            field=models.CharField(choices=[('json_schema', 'json_schema (server enforces the schema)'), ('json_object', 'json_object (example reply in the prompt)'), ('plain', 'plain request (example reply in the prompt)')], max_length=20, verbose_name='json mode'),
        ),
        migrations.AlterField(
            model_name='llmservermode',
            name='last_error',
            field=models.TextField(blank=True, help_text='Why the previous mode was refused.', verbose_name='last error'),
        ),
        migrations.AlterField(
            model_name='llmservermode',
            name='model',
            field=models.CharField(max_length=200, verbose_name='model'),
        ),
        migrations.AlterField(
            model_name='llmservermode',
            name='probed_at',
            field=models.DateTimeField(help_text='When the modes before this one were last tried.', verbose_name='probed at'),
        ),
        migrations.AlterField(
            model_name='llmservermode',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='matter',
            name='assigned_users',
            field=models.ManyToManyField(blank=True, related_name='matters', through='memory.MatterAssignment', through_fields=('matter', 'user'), to=settings.AUTH_USER_MODEL, verbose_name='assigned users'),
        ),
        migrations.AlterField(
            model_name='matter',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='matter',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='matters', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='matter',
            name='status',
            field=models.CharField(choices=[('open', 'open'), ('closed', 'closed')], default='open', max_length=10, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='matterassignment',
            name='assigned_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='assigned at'),
        ),
        migrations.AlterField(
            model_name='matterassignment',
            name='assigned_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='assigned by'),
        ),
        migrations.AlterField(
            model_name='matterassignment',
            name='matter',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='assignments', to='memory.matter', verbose_name='matter'),
        ),
        migrations.AlterField(
            model_name='matterassignment',
            name='user',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='matter_assignments', to=settings.AUTH_USER_MODEL, verbose_name='user'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='membership',
            name='user',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='memberships', to=settings.AUTH_USER_MODEL, verbose_name='user'),
        ),
        migrations.AlterField(
            model_name='message',
            name='conversation',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='messages', to='memory.conversation', verbose_name='conversation'),
        ),
        migrations.AlterField(
            model_name='message',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='message',
            name='embedding',
            field=pgvector.django.vector.VectorField(blank=True, dimensions=settings.NOTE_EMBEDDING_DIMENSIONS, null=True, verbose_name='embedding'),
        ),
        migrations.AlterField(
            model_name='message',
            name='embedding_model',
            field=models.CharField(blank=True, max_length=100, verbose_name='embedding model'),
        ),
        migrations.AlterField(
            model_name='message',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='message',
            name='role',
            field=models.CharField(choices=[('user', 'user'), ('assistant', 'assistant'), ('system', 'system')], max_length=10, verbose_name='role'),
        ),
        migrations.AlterField(
            model_name='message',
            name='search_text',
            field=models.TextField(blank=True, editable=False, help_text='Segmented words for full-text search.', verbose_name='search text'),
        ),
        migrations.AlterField(
            model_name='message',
            name='search_vector',
            field=models.GeneratedField(db_persist=True, expression=django.contrib.postgres.search.SearchVector('search_text', config='english'), output_field=django.contrib.postgres.search.SearchVectorField(), verbose_name='search vector'),
        ),
        migrations.AlterField(
            model_name='message',
            name='status',
            field=models.CharField(choices=[('streaming', 'streaming'), ('complete', 'complete'), ('cancelled', 'cancelled'), ('failed', 'failed')], default='complete', max_length=10, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='note',
            name='content_hash',
            field=models.CharField(db_index=True, editable=False, max_length=64, verbose_name='content hash'),
        ),
        migrations.AlterField(
            model_name='note',
            name='conversation',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='notes', to='memory.conversation', verbose_name='conversation'),
        ),
        migrations.AlterField(
            model_name='note',
            name='embedding',
            field=pgvector.django.vector.VectorField(blank=True, dimensions=settings.NOTE_EMBEDDING_DIMENSIONS, null=True, verbose_name='embedding'),
        ),
        migrations.AlterField(
            model_name='note',
            name='embedding_model',
            field=models.CharField(blank=True, max_length=100, verbose_name='embedding model'),
        ),
        migrations.AlterField(
            model_name='note',
            name='evolution_history',
            field=models.JSONField(blank=True, default=list, verbose_name='evolution history'),
        ),
        migrations.AlterField(
            model_name='note',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='notes', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='note',
            name='keywords',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=100), blank=True, default=list, size=None, verbose_name='keywords'),
        ),
        migrations.AlterField(
            model_name='note',
            name='matter',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='notes', to='memory.matter', verbose_name='matter'),
        ),
        migrations.AlterField(
            model_name='note',
            name='owner',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='owned_notes', to=settings.AUTH_USER_MODEL, verbose_name='owner'),
        ),
        migrations.AlterField(
            model_name='note',
            name='search_text',
            field=models.TextField(blank=True, editable=False, help_text='Segmented words for full-text search.', verbose_name='search text'),
        ),
        migrations.AlterField(
            model_name='note',
            name='source_message_ids',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), blank=True, default=list, size=None, verbose_name='source message ids'),
        ),
        migrations.AlterField(
            model_name='note',
            name='status',
            field=models.CharField(choices=[('active', 'active'), ('superseded', 'superseded'), ('forgotten', 'forgotten')], default='active', max_length=20, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='note',
            name='superseded_by',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='supersedes', to='memory.note', verbose_name='superseded by'),
        ),
        migrations.AlterField(
            model_name='note',
            name='tags',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=100), blank=True, default=list, size=None, verbose_name='tags'),
        ),
        migrations.AlterField(
            model_name='notelink',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='notelink',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='notelink',
            name='link_type',
            field=models.CharField(choices=[('semantic', 'semantic (A-Mem)'), ('supports', 'supports'), ('mentions', 'mentions'), ('temporal_next', 'temporal next'), ('contradicts', 'contradicts'), ('same_matter', 'same matter'), ('supersedes', 'supersedes')], max_length=20, verbose_name='link type'),
        ),
        migrations.AlterField(
            model_name='notelink',
            name='reason',
            field=models.CharField(blank=True, max_length=300, verbose_name='reason'),
        ),
        migrations.AlterField(
            model_name='notelink',
            name='source',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='links_out', to='memory.note', verbose_name='source'),
        ),
        migrations.AlterField(
            model_name='notelink',
            name='target',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='links_in', to='memory.note', verbose_name='target'),
        ),
        migrations.AlterField(
            model_name='notelink',
            name='weight',
            field=models.FloatField(default=0.5, verbose_name='weight'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='confidence',
            field=models.FloatField(verbose_name='confidence'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='content',
            field=models.TextField(verbose_name='content'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='content_hash',
            field=models.CharField(max_length=64, verbose_name='content hash'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='conversation',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.conversation', verbose_name='conversation'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='said_at',
            field=models.DateTimeField(verbose_name='said at'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='source_key',
            field=models.CharField(max_length=64, verbose_name='source key'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='source_message_ids',
            field=django.contrib.postgres.fields.ArrayField(base_field=models.BigIntegerField(), blank=True, default=list, size=None, verbose_name='source message ids'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='trait',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='evidence', to='memory.personatrait', verbose_name='trait'),
        ),
        migrations.AlterField(
            model_name='personaevidence',
            name='user',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='user'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='base_confidence',
            field=models.FloatField(default=0.0, verbose_name='base confidence'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='category',
            field=models.CharField(max_length=20, verbose_name='category'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='conflicts_with',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='memory.personatrait', verbose_name='conflicts with'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='content',
            field=models.TextField(verbose_name='content'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='decision',
            field=models.CharField(blank=True, help_text='Last promotion decision and why.', max_length=500, verbose_name='decision'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='embedding',
            field=pgvector.django.vector.VectorField(blank=True, dimensions=settings.NOTE_EMBEDDING_DIMENSIONS, null=True, verbose_name='embedding'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='evidence_count',
            field=models.PositiveIntegerField(default=0, verbose_name='evidence count'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='last_evidence_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='last evidence at'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='note',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='memory.note', verbose_name='note'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='status',
            field=models.CharField(choices=[('forming', 'forming (not yet promoted)'), ('promoted', 'promoted to the profile'), ('disputed', 'promoted, disputed by contrary evidence'), ('superseded', 'superseded by a stronger trait')], default='forming', max_length=12, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='strength',
            field=models.FloatField(default=0.0, verbose_name='strength'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='personatrait',
            name='user',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='persona_traits', to=settings.AUTH_USER_MODEL, verbose_name='user'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='action',
            field=models.CharField(choices=[('add', 'add'), ('update', 'update'), ('ignore', 'ignore'), ('persona', 'persona evidence')], max_length=10, verbose_name='action'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='category',
            field=models.CharField(max_length=20, verbose_name='category'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='consolidation',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='routing', to='memory.consolidation', verbose_name='consolidation'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='content',
            field=models.TextField(verbose_name='content'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='content_hash',
            field=models.CharField(max_length=64, verbose_name='content hash'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='item_index',
            field=models.PositiveIntegerField(verbose_name='item index'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='matter',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.matter', verbose_name='matter'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='note',
            field=models.ForeignKey(blank=True, help_text='The note written (ADD/UPDATE) or reinforced (IGNORE as duplicate).', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='memory.note', verbose_name='note'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='owner',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL, verbose_name='owner'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='previous',
            field=models.ForeignKey(blank=True, help_text='The note this item was compared with (superseded on UPDATE).', null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='memory.note', verbose_name='previous'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='reason',
            field=models.CharField(max_length=500, verbose_name='reason'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='similarity',
            field=models.FloatField(blank=True, null=True, verbose_name='similarity'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='source_key',
            field=models.CharField(max_length=64, verbose_name='source key'),
        ),
        migrations.AlterField(
            model_name='routingdecision',
            name='turn',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='routing', to='memory.turnextraction', verbose_name='turn'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='assistant_message',
            field=models.OneToOneField(on_delete=django.db.models.deletion.PROTECT, related_name='turn_extraction', to='memory.message', verbose_name='assistant message'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='attempts',
            field=models.PositiveIntegerField(default=0, verbose_name='attempts'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='conversation',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='turn_extractions', to='memory.conversation', verbose_name='conversation'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='created_at',
            field=models.DateTimeField(auto_now_add=True, verbose_name='created at'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='decisions',
            field=models.JSONField(blank=True, default=list, help_text='ADD / UPDATE / IGNORE per item.', verbose_name='decisions'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='engine',
            field=models.CharField(blank=True, max_length=200, verbose_name='engine'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='finished_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='finished at'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='firm',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.firm', verbose_name='firm'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='items',
            field=models.JSONField(blank=True, help_text='What the extractor returned.', null=True, verbose_name='items'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='last_error',
            field=models.TextField(blank=True, verbose_name='last error'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='next_attempt_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='next attempt at'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='rejected',
            field=models.JSONField(blank=True, default=list, help_text='Items the validator refused, with reasons.', verbose_name='rejected'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='source_type',
            field=models.CharField(default='chat', max_length=20, verbose_name='source type'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='started_at',
            field=models.DateTimeField(blank=True, null=True, verbose_name='started at'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='status',
            field=models.CharField(choices=[('pending', 'pending'), ('running', 'running'), ('done', 'done'), ('skipped', 'skipped (trivial turn)'), ('failed', 'failed')], default='pending', max_length=10, verbose_name='status'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='task_id',
            field=models.CharField(blank=True, help_text='Last background task enqueued.', max_length=64, verbose_name='task id'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='updated_at',
            field=models.DateTimeField(auto_now=True, verbose_name='updated at'),
        ),
        migrations.AlterField(
            model_name='turnextraction',
            name='user_message',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='+', to='memory.message', verbose_name='user message'),
        ),
    ]
