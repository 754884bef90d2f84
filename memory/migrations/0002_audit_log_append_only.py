"""The audit log is append-only in the database too: UPDATE and DELETE raise."""
from django.db import migrations

CREATE = """
CREATE OR REPLACE FUNCTION memory_auditlog_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'memory_auditlog is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER memory_auditlog_no_update_or_delete
    BEFORE UPDATE OR DELETE ON memory_auditlog
    FOR EACH ROW EXECUTE FUNCTION memory_auditlog_append_only();
"""

DROP = """
DROP TRIGGER IF EXISTS memory_auditlog_no_update_or_delete ON memory_auditlog;
DROP FUNCTION IF EXISTS memory_auditlog_append_only();
"""


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]

    operations = [migrations.RunSQL(CREATE, DROP)]
