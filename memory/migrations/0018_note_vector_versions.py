"""A change number on every note, for the search's exact-layer vectors kept in process.

``memory/retrieval/exact_vectors.py`` keeps the vectors of the layers a search compares one by
one (a matter's case notes, a user's profile) in memory, and checks before every use that the
notes did not change: ``vector_seq`` is set from one sequence whenever a note is inserted or one
of the columns that decide which layer's vectors it is in changes (scope, firm, matter, owner,
status, embedding). A group's (count, newest, XOR of its numbers) then changes with any insert,
delete or such update; two narrow partial indexes read it without the 1.5 KB vectors. Their
predicate adds ``(vector_seq IS NULL OR vector_seq IS NOT NULL)``, true of every row but implied
only by a query that says it (the version read), so that no other read can use them: the
planner preferred them to the covering indexes for the exact case read and then fetched every
vector from the heap (~31 ms instead of ~9 at 14k notes). docs/read-path.md, "Exact layers in memory".

The column is not a model field: only the trigger writes it, only the search reads it. Notes
stored before this migration keep NULL until they change (numbering them would rewrite every
row and its HNSW entries: 7 minutes at 200k notes); the count still sees them.
"""
from django.db import migrations

FORWARD = r"""
CREATE SEQUENCE memory_note_vector_seq;
ALTER TABLE memory_note ADD COLUMN vector_seq bigint;
CREATE FUNCTION memory_note_vector_seq() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- Columns named in the body, not in a WHEN clause: the re-embedding switch renames
    -- ``embedding`` and later drops the old column, which a WHEN clause would pin.
    IF TG_OP = 'INSERT' THEN
        NEW.vector_seq := nextval('memory_note_vector_seq');
    ELSIF OLD.memory_scope IS DISTINCT FROM NEW.memory_scope OR OLD.firm_id IS DISTINCT FROM NEW.firm_id
       OR OLD.matter_id IS DISTINCT FROM NEW.matter_id OR OLD.owner_id IS DISTINCT FROM NEW.owner_id
       OR OLD.status IS DISTINCT FROM NEW.status OR OLD.embedding IS DISTINCT FROM NEW.embedding THEN
        NEW.vector_seq := nextval('memory_note_vector_seq');
    END IF;
    RETURN NEW;
END;
$$;
CREATE TRIGGER memory_note_vector_seq BEFORE INSERT OR UPDATE ON memory_note
    FOR EACH ROW EXECUTE FUNCTION memory_note_vector_seq();
CREATE INDEX note_case_versions ON memory_note (matter_id, owner_id) INCLUDE (vector_seq)
    WHERE memory_scope = 'case' AND (vector_seq IS NULL OR vector_seq IS NOT NULL);
CREATE INDEX note_profile_versions ON memory_note (owner_id, matter_id) INCLUDE (vector_seq)
    WHERE memory_scope = 'user_profile' AND (vector_seq IS NULL OR vector_seq IS NOT NULL);
"""

BACKWARD = r"""
DROP INDEX IF EXISTS note_profile_versions;
DROP INDEX IF EXISTS note_case_versions;
DROP TRIGGER IF EXISTS memory_note_vector_seq ON memory_note;
DROP FUNCTION IF EXISTS memory_note_vector_seq();
ALTER TABLE memory_note DROP COLUMN IF EXISTS vector_seq;
DROP SEQUENCE IF EXISTS memory_note_vector_seq;
"""


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0017_profile_vectors"),
    ]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
