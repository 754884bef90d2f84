"""The shadow columns of a re-embedding run, their trigger and their indexes (DDL only).

While a run is in progress every vector table has two more columns, invisible to the ORM:
``embedding_next vector(D)`` and ``embedding_model_next``. A trigger empties a row's shadow
vector whenever the live write path changes that row's ``embedding``, so a row written after
the run started is encoded again before the switch. Each index that reads ``embedding`` gets
a twin on ``embedding_next`` named ``<name>_next``; the switch renames both sets (see
``switch.py``). docs/operations.md, "Changing the embedding model".
"""
from __future__ import annotations

import re

from django.db import connection

from memory.embedding_schema.tables import VECTOR_TABLES

TRIGGER = "legalmem_reembed_stale"
SHADOW_SUFFIX = "_next"
OLD_SUFFIX = "_old"
_READS_EMBEDDING = re.compile(r"\bembedding\b")
_INDEX_HEAD = re.compile(r"^CREATE (UNIQUE )?INDEX (\S+) ON ")

# Runs for every UPDATE of a vector table during a run: a new live vector (other text, an
# erased row) makes the shadow vector stale, unless the statement writes the shadow itself.
_TRIGGER_FUNCTION = f"""
CREATE OR REPLACE FUNCTION {TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.embedding IS DISTINCT FROM OLD.embedding
       AND NEW.embedding_next IS NOT DISTINCT FROM OLD.embedding_next THEN
        NEW.embedding_next := NULL;
        NEW.embedding_model_next := '';
    END IF;
    RETURN NEW;
END $$
"""


def column_dimensions(table: str, column: str) -> int | None:
    """The declared width of a vector column, or None when the column does not exist."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "WHERE c.relname = %s AND a.attname = %s AND NOT a.attisdropped "
            "AND c.relnamespace = current_schema()::regnamespace",
            [table, column],
        )
        row = cursor.fetchone()
    return None if row is None else int(row[0])


def has_column(table: str, column: str) -> bool:
    return column_dimensions(table, column) is not None


def add_shadow_columns(dimensions: int) -> None:
    """Add the shadow columns and the staleness trigger (inside the caller's transaction)."""
    with connection.cursor() as cursor:
        cursor.execute(_TRIGGER_FUNCTION)
        for spec in VECTOR_TABLES:
            cursor.execute(
                f"ALTER TABLE {spec.table} ADD COLUMN IF NOT EXISTS embedding_next vector({int(dimensions)}), "
                f"ADD COLUMN IF NOT EXISTS embedding_model_next varchar(100) NOT NULL DEFAULT ''"
            )
            cursor.execute(f"DROP TRIGGER IF EXISTS {TRIGGER} ON {spec.table}")
            cursor.execute(
                f"CREATE TRIGGER {TRIGGER} BEFORE UPDATE ON {spec.table} "
                f"FOR EACH ROW EXECUTE FUNCTION {TRIGGER}()"
            )


def drop_trigger() -> None:
    with connection.cursor() as cursor:
        for spec in VECTOR_TABLES:
            cursor.execute(f"DROP TRIGGER IF EXISTS {TRIGGER} ON {spec.table}")
        cursor.execute(f"DROP FUNCTION IF EXISTS {TRIGGER}()")


def drop_columns(suffix: str) -> None:
    """Drop ``embedding<suffix>`` and ``embedding_model<suffix>`` (their indexes go with them)."""
    with connection.cursor() as cursor:
        for spec in VECTOR_TABLES:
            cursor.execute(
                f"ALTER TABLE {spec.table} DROP COLUMN IF EXISTS embedding{suffix}, "
                f"DROP COLUMN IF EXISTS embedding_model{suffix}"
            )


def live_indexes(table: str) -> dict[str, str]:
    """name → definition of each index of ``table`` that reads the live ``embedding`` column."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s AND schemaname = current_schema()",
            [table],
        )
        rows = cursor.fetchall()
    return {
        name: definition for name, definition in rows
        if _READS_EMBEDDING.search(definition.split(" ON ", 1)[1])
    }


def shadow_name(name: str, suffix: str = SHADOW_SUFFIX) -> str:
    shadow = f"{name}{suffix}"
    if len(shadow) > 63:
        raise ValueError(f"index name {shadow} is longer than PostgreSQL's 63 characters")
    return shadow


def index_validity(names: list[str]) -> dict[str, bool]:
    """name → built and valid, for those of these indexes that exist."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid "
            "WHERE c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace",
            [names],
        )
        return dict(cursor.fetchall())


def build_shadow_indexes(progress=None) -> list[str]:
    """Build ``<name>_next`` on ``embedding_next`` for each live index on ``embedding``, without
    blocking writes (CONCURRENTLY: must run outside a transaction). An invalid leftover of a
    killed build is dropped and built again. Returns the names built now."""
    built = []
    with connection.cursor() as cursor:
        for spec in VECTOR_TABLES:
            for name, definition in live_indexes(spec.table).items():
                shadow = shadow_name(name)
                valid = index_validity([shadow]).get(shadow)
                if valid:
                    continue
                if valid is False:
                    cursor.execute(f"DROP INDEX CONCURRENTLY IF EXISTS {shadow}")
                head, body = definition.split(" ON ", 1)
                unique = "UNIQUE " if _INDEX_HEAD.match(definition).group(1) else ""
                body = _READS_EMBEDDING.sub("embedding_next", body)
                if progress:
                    progress(f"building index {shadow} on {spec.table}.embedding_next")
                cursor.execute(f"CREATE {unique}INDEX CONCURRENTLY {shadow} ON {body}")
                built.append(shadow)
    return built


def analyze() -> None:
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE " + ", ".join(spec.table for spec in VECTOR_TABLES))


def rename_into_place() -> None:
    """The switch's DDL (inside its transaction, tables locked): live columns and indexes get
    ``_old``, shadow ones take the live names; the old model column stops being required (the
    ORM no longer writes it)."""
    with connection.cursor() as cursor:
        for spec in VECTOR_TABLES:
            for name in live_indexes(spec.table):
                cursor.execute(f"ALTER INDEX {name} RENAME TO {shadow_name(name, OLD_SUFFIX)}")
                cursor.execute(f"ALTER INDEX {shadow_name(name)} RENAME TO {name}")
            t = spec.table
            cursor.execute(f"ALTER TABLE {t} RENAME COLUMN embedding TO embedding_old")
            cursor.execute(f"ALTER TABLE {t} RENAME COLUMN embedding_next TO embedding")
            if not spec.model_column:
                cursor.execute(f"ALTER TABLE {t} DROP COLUMN embedding_model_next")
                continue
            cursor.execute(f"ALTER TABLE {t} RENAME COLUMN embedding_model TO embedding_model_old")
            cursor.execute(f"ALTER TABLE {t} RENAME COLUMN embedding_model_next TO embedding_model")
            cursor.execute(f"ALTER TABLE {t} ALTER COLUMN embedding_model DROP DEFAULT")
            cursor.execute(f"ALTER TABLE {t} ALTER COLUMN embedding_model_old DROP NOT NULL")
