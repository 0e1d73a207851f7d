"""Search indexes of offers (PostgreSQL only; nothing on SQLite).

The search document is the searched fields joined by spaces, exactly as
``apps.casework.search.Document`` writes it in the query: the planner uses an
expression index only for the same expression. One index of its words (the
``simple`` configuration) and one of its trigrams (``pg_trgm``), for
identifiers and text a word splitter does not cut.
"""

from django.db import migrations

DOCUMENT = "COALESCE(accelerator_model, '') || ' ' || COALESCE(notes, '')"

CREATE = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    f"CREATE INDEX IF NOT EXISTS offers_search_words ON offers_offer "
    f"USING gin (to_tsvector('simple'::regconfig, {DOCUMENT}))",
    f"CREATE INDEX IF NOT EXISTS offers_search_trigrams ON offers_offer "
    f"USING gin (({DOCUMENT}) gin_trgm_ops)",
]
DROP = [
    "DROP INDEX IF EXISTS offers_search_words",
    "DROP INDEX IF EXISTS offers_search_trigrams",
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
    dependencies = [("offers", "0006_input_bounds")]

    operations = [migrations.RunPython(forwards, backwards, elidable=False)]
