"""Search of evidence bundles on PostgreSQL: its words stored and indexed, its trigrams indexed.

The search document is the searched fields joined by spaces, written exactly
as ``apps.casework.search.Document`` writes it in the query (the planner uses
an expression index only for the same expression). ``search_words`` keeps its
words (``to_tsvector('simple', ...)``, a generated column the database keeps
up to date, so that ranking reads them instead of parsing every match again);
the trigram index (``pg_trgm``) finds identifiers and text a word splitter
does not cut. The column is no field of the model: Django never reads or
writes it. Nothing is done on SQLite.

A field of the document cannot change its type while the column is built on
it: drop the column first, and add it again after (docs/search.md).
"""

from django.db import migrations

DOCUMENT = (
    "COALESCE(sha256, '')"
    " || ' ' || COALESCE(bundle_uuid, '')"
    " || ' ' || COALESCE(host_id, '')"
    " || ' ' || COALESCE(harness_version, '')"
)

CREATE = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    f"ALTER TABLE evidence_evidencebundle ADD COLUMN IF NOT EXISTS search_words tsvector "
    f"GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, {DOCUMENT})) STORED",
    "CREATE INDEX IF NOT EXISTS bundles_search_words ON evidence_evidencebundle USING gin (search_words)",
    f"CREATE INDEX IF NOT EXISTS bundles_search_trigrams ON evidence_evidencebundle "
    f"USING gin (({DOCUMENT}) gin_trgm_ops)",
]
DROP = [
    "DROP INDEX IF EXISTS bundles_search_trigrams",
    "DROP INDEX IF EXISTS bundles_search_words",
    "ALTER TABLE evidence_evidencebundle DROP COLUMN IF EXISTS search_words",
]


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for sql in CREATE:
            schema_editor.execute(sql)


def backwards(apps, schema_editor):
    # The extension stays: other tables' indexes may use it.
    if schema_editor.connection.vendor == "postgresql":
        for sql in DROP:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("evidence", "0007_input_bounds")]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
