"""One HNSW index per firm for the firm-wide layers, kept by the database itself.

The three firm-wide layers (cross_case, general_law, global) used to share one partial HNSW index
over every firm's notes. A firm's walk then also visited the other firms' notes and filtered
them out: on real text embeddings, for a firm holding a tenth of that index, recall@10 was
0.96–0.97 at 4 ms; in a graph of its own 0.99–1.00 at 1 ms (docs/performance.md, "One index per
firm"). So each firm gets ``note_firmwide_hnsw_f<firm id>``, partial on its own firm-wide active
notes, and the shared index goes.

Triggers on ``memory_firm`` keep the set complete whatever creates or removes a firm (the
service, the admin, an import, a benchmark): a firm's INSERT builds its index in the same
transaction (so a rolled-back firm leaves none), its DELETE drops it, a TRUNCATE drops them all.
A transaction that wrote notes before it inserts a firm cannot build an index on ``memory_note``
(their deferred checks are pending): the firm is created all the same and
``memory.services.tenancy.build_missing_firm_note_indexes`` builds its index after the commit
(``create_firm`` asks for it, the worker at start). Until then its walk uses the index of all notes.
During a re-embedding run (``embedding_next`` exists) a new firm's index is built on the shadow
column too, so the switch finds it. This migration builds the indexes of the firms that exist.

Undone by migration 0028 (``build_missing_firm_note_indexes`` is gone with it): every statement on
``memory_note`` paid for each firm's index.
"""
from django.db import migrations

FORWARD = r"""
CREATE OR REPLACE FUNCTION legalmem_build_firm_note_index(firm bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    predicate text := format(
        'firm_id = %s AND memory_scope IN (''cross_case'', ''general_law'', ''global'') AND status = ''active''',
        firm);
BEGIN
    EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory_note USING hnsw (embedding vector_cosine_ops) '
                   'WITH (m = 16, ef_construction = 64) WHERE %s', 'note_firmwide_hnsw_f' || firm, predicate);
    IF EXISTS (SELECT 1 FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
               WHERE c.relname = 'memory_note' AND c.relnamespace = current_schema()::regnamespace
                 AND a.attname = 'embedding_next' AND NOT a.attisdropped) THEN
        EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON memory_note USING hnsw (embedding_next vector_cosine_ops) '
                       'WITH (m = 16, ef_construction = 64) WHERE %s', 'note_firmwide_hnsw_f' || firm || '_next',
                       predicate);
    END IF;
END $$;

CREATE OR REPLACE FUNCTION legalmem_drop_firm_note_indexes(firm bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    found record;
BEGIN
    FOR found IN
        SELECT c.relname FROM pg_index i
        JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class t ON t.oid = i.indrelid
        WHERE t.relname = 'memory_note' AND t.relnamespace = current_schema()::regnamespace
          AND (firm IS NULL AND c.relname ~ '^note_firmwide_hnsw_f[0-9]+(_next|_old)?$'
               OR c.relname ~ ('^note_firmwide_hnsw_f' || firm || '(_next|_old)?$'))
    LOOP
        EXECUTE format('DROP INDEX IF EXISTS %I', found.relname);
    END LOOP;
END $$;

CREATE OR REPLACE FUNCTION legalmem_firm_note_index_kept() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        -- A transaction that already wrote notes has their deferred checks pending, and
        -- PostgreSQL refuses an index on memory_note then: the firm is still created, and its
        -- index is built after the commit (memory.services.tenancy.build_missing_firm_note_indexes).
        BEGIN
            PERFORM legalmem_build_firm_note_index(NEW.id);
        EXCEPTION WHEN object_in_use THEN
            RAISE NOTICE 'firm %: its note index is built after the commit', NEW.id;
        END;
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM legalmem_drop_firm_note_indexes(OLD.id);
    ELSE  -- TRUNCATE
        PERFORM legalmem_drop_firm_note_indexes(NULL);
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER firm_note_index_on_insert AFTER INSERT ON memory_firm
    FOR EACH ROW EXECUTE FUNCTION legalmem_firm_note_index_kept();
CREATE TRIGGER firm_note_index_on_delete AFTER DELETE ON memory_firm
    FOR EACH ROW EXECUTE FUNCTION legalmem_firm_note_index_kept();
CREATE TRIGGER firm_note_index_on_truncate AFTER TRUNCATE ON memory_firm
    FOR EACH STATEMENT EXECUTE FUNCTION legalmem_firm_note_index_kept();

SELECT legalmem_build_firm_note_index(id) FROM memory_firm ORDER BY id;
"""

BACKWARD = r"""
DROP TRIGGER IF EXISTS firm_note_index_on_insert ON memory_firm;
DROP TRIGGER IF EXISTS firm_note_index_on_delete ON memory_firm;
DROP TRIGGER IF EXISTS firm_note_index_on_truncate ON memory_firm;
SELECT legalmem_drop_firm_note_indexes(NULL);
DROP FUNCTION IF EXISTS legalmem_firm_note_index_kept();
DROP FUNCTION IF EXISTS legalmem_drop_firm_note_indexes(bigint);
DROP FUNCTION IF EXISTS legalmem_build_firm_note_index(bigint);
"""


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0026_turn_extraction_added"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="note", name="note_embedding_firmwide_hnsw"),
        migrations.RunSQL(FORWARD, BACKWARD),
    ]
