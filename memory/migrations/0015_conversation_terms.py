"""Per-conversation term counts of complete messages (``ConversationTerm``), kept by triggers.

BM25 IDF over a user's messages is read from these counts above ``EXACT_MESSAGE_MAX_ROWS``
(memory/retrieval/messages.py; docs/read-path.md). Statement-level triggers with transition
tables keep them in the transaction of every change of ``memory_message``: a bulk insert of
10,000 messages is one aggregated upsert, an update counts only rows whose status or terms
changed (the indexing job's embedding updates change nothing here), a delete subtracts.
"""

import django.db.models.deletion
from django.db import migrations, models


# One row per (conversation, lexeme) a changed message holds, +1 or -1, and the conversation's
# total (the empty lexeme); only complete messages count. Rows are upserted in key order (two
# transactions touching the same conversation lock its rows in the same order), and counts
# that reach zero are removed.
TRIGGERS = r"""
CREATE FUNCTION memory_message_terms() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids bigint[];
    lexemes text[];
    deltas integer[];
BEGIN
    IF TG_OP = 'INSERT' THEN
        SELECT array_agg(conversation_id), array_agg(lexeme), array_agg(d) INTO ids, lexemes, deltas FROM (
            SELECT n.conversation_id, t.lexeme, count(*)::integer AS d FROM new_rows n,
                unnest(array_append(tsvector_to_array(n.search_vector), '')) AS t(lexeme)
            WHERE n.status = 'complete' GROUP BY 1, 2
        ) g;
    ELSIF TG_OP = 'DELETE' THEN
        SELECT array_agg(conversation_id), array_agg(lexeme), array_agg(d) INTO ids, lexemes, deltas FROM (
            SELECT o.conversation_id, t.lexeme, -count(*)::integer AS d FROM old_rows o,
                unnest(array_append(tsvector_to_array(o.search_vector), '')) AS t(lexeme)
            WHERE o.status = 'complete' GROUP BY 1, 2
        ) g;
    ELSE
        -- Only rows whose status, terms or conversation changed (not the embedding updates).
        SELECT array_agg(conversation_id), array_agg(lexeme), array_agg(d) INTO ids, lexemes, deltas FROM (
            SELECT c.conversation_id, t.lexeme, sum(c.d)::integer AS d FROM (
                SELECT o.conversation_id, o.search_vector, -1 AS d, o.status FROM old_rows o JOIN new_rows n ON n.id = o.id
                WHERE n.status IS DISTINCT FROM o.status OR n.search_vector IS DISTINCT FROM o.search_vector
                    OR n.conversation_id <> o.conversation_id
                UNION ALL
                SELECT n.conversation_id, n.search_vector, 1 AS d, n.status FROM new_rows n JOIN old_rows o ON o.id = n.id
                WHERE n.status IS DISTINCT FROM o.status OR n.search_vector IS DISTINCT FROM o.search_vector
                    OR n.conversation_id <> o.conversation_id
            ) c, unnest(array_append(tsvector_to_array(c.search_vector), '')) AS t(lexeme)
            WHERE c.status = 'complete' GROUP BY 1, 2 HAVING sum(c.d) <> 0
        ) g;
    END IF;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    INSERT INTO memory_conversationterm (conversation_id, lexeme, messages)
    SELECT z.id, z.lexeme, z.d FROM unnest(ids, lexemes, deltas) AS z(id, lexeme, d) ORDER BY z.id, z.lexeme
    ON CONFLICT (conversation_id, lexeme)
        DO UPDATE SET messages = memory_conversationterm.messages + EXCLUDED.messages;
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM memory_conversationterm c USING unnest(ids, lexemes, deltas) AS z(id, lexeme, d)
        WHERE z.d < 0 AND c.conversation_id = z.id AND c.lexeme = z.lexeme AND c.messages <= 0;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER memory_message_terms_insert AFTER INSERT ON memory_message
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_message_terms();
CREATE TRIGGER memory_message_terms_update AFTER UPDATE ON memory_message
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_message_terms();
CREATE TRIGGER memory_message_terms_delete AFTER DELETE ON memory_message
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION memory_message_terms();
"""

DROP_TRIGGERS = r"""
DROP TRIGGER IF EXISTS memory_message_terms_insert ON memory_message;
DROP TRIGGER IF EXISTS memory_message_terms_update ON memory_message;
DROP TRIGGER IF EXISTS memory_message_terms_delete ON memory_message;
DROP FUNCTION IF EXISTS memory_message_terms();
"""

BACKFILL = r"""
INSERT INTO memory_conversationterm (conversation_id, lexeme, messages)
SELECT m.conversation_id, t.lexeme, count(*) FROM memory_message m,
    unnest(array_append(tsvector_to_array(m.search_vector), '')) AS t(lexeme)
WHERE m.status = 'complete' GROUP BY m.conversation_id, t.lexeme;
"""


class Migration(migrations.Migration):

    dependencies = [
        ('memory', '0014_merged_choices_and_labels'),
    ]

    operations = [
        migrations.CreateModel(
            name='ConversationTerm',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('lexeme', models.TextField(blank=True, verbose_name='lexeme')),
                ('messages', models.IntegerField(verbose_name='messages')),
                ('conversation', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memory.conversation', verbose_name='conversation')),
            ],
            options={
                'verbose_name': 'conversation term',
                'verbose_name_plural': 'conversation terms',
                'constraints': [models.UniqueConstraint(fields=('conversation', 'lexeme'), name='conversation_term_unique')],
            },
        ),
        migrations.RemoveIndex(model_name='message', name='message_conv_said_idx'),
        migrations.AddIndex(
            model_name='message',
            index=models.Index(fields=['conversation', 'said_at', 'id'], name='message_conv_said_id_idx'),
        ),
        migrations.RunSQL(TRIGGERS, reverse_sql=DROP_TRIGGERS),
        migrations.RunSQL(BACKFILL, reverse_sql=migrations.RunSQL.noop),
    ]
