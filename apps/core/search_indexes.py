"""The migration operation that stores and indexes one table's search document on
PostgreSQL (``apps.casework.search``; docs/search.md), and does nothing on SQLite.

The search document is the searched fields joined by spaces, written exactly as
``apps.casework.search.Document`` writes it in the query (the planner uses an
expression index only for the same expression). ``search_words`` keeps its words
(``to_tsvector('simple', ...)``, a generated column the database keeps up to date, so
that ranking reads them instead of parsing every match again); the trigram index
(``pg_trgm``) finds identifiers and text a word splitter does not cut. The column is
no field of the model: Django never reads or writes it.

A field of the document cannot change its type while the column is built on it: drop
the column first, and add it again after.

The indexes are GIN indexes without a pending list (``fastupdate = off``): a write
updates them at once. With the list, writes since the last vacuum wait in it unsorted
and every search reads all of them (a few megabytes after a busy day: 2 ms of a 3 ms
lookup), so the search page was slow until autovacuum came by.
"""

from django.db import migrations

WITHOUT_PENDING_LIST = "WITH (fastupdate = off)"


def document(*columns: str) -> str:
    """The searched columns joined by spaces, as the query writes them."""
    return " || ' ' || ".join(f"COALESCE({column}, '')" for column in columns)


def search_index_operation(
    table: str, prefix: str, text: str, *, trigrams: dict[str, str] | None = None
) -> migrations.RunPython:
    """Store ``text``'s words in ``table.search_words`` and index them and ``text``'s
    trigrams (``<prefix>_search_words``, ``<prefix>_search_trigrams``), plus any
    ``trigrams`` (index name suffix: expression) the search looks up on their own."""
    extra = trigrams or {}
    create = [
        "CREATE EXTENSION IF NOT EXISTS pg_trgm",
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS search_words tsvector "
        f"GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, {text})) STORED",
        f"CREATE INDEX IF NOT EXISTS {prefix}_search_words ON {table} USING gin (search_words)"
        f" {WITHOUT_PENDING_LIST}",
        f"CREATE INDEX IF NOT EXISTS {prefix}_search_trigrams ON {table} "
        f"USING gin (({text}) gin_trgm_ops) {WITHOUT_PENDING_LIST}",
        *(
            f"CREATE INDEX IF NOT EXISTS {prefix}_search_{name} ON {table} "
            f"USING gin (({expression}) gin_trgm_ops) {WITHOUT_PENDING_LIST}"
            for name, expression in extra.items()
        ),
    ]
    drop = [
        *(f"DROP INDEX IF EXISTS {prefix}_search_{name}" for name in reversed(extra)),
        f"DROP INDEX IF EXISTS {prefix}_search_trigrams",
        f"DROP INDEX IF EXISTS {prefix}_search_words",
        f"ALTER TABLE {table} DROP COLUMN IF EXISTS search_words",
    ]

    def run(statements):
        def apply(apps, schema_editor):
            if schema_editor.connection.vendor == "postgresql":
                for sql in statements:
                    schema_editor.execute(sql)

        return apply

    # Backwards, the extension stays: other tables' indexes may use it.
    return migrations.RunPython(run(create), run(drop), elidable=False)


def without_pending_list_operation(*indexes: str) -> migrations.RunPython:
    """Write to the GIN ``indexes`` at once from now on, and sort what waits in their
    pending lists into them now (PostgreSQL; nothing on SQLite)."""

    def forwards(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for index in indexes:
            schema_editor.execute(f"ALTER INDEX IF EXISTS {index} SET (fastupdate = off)")
            schema_editor.execute(
                "SELECT gin_clean_pending_list(to_regclass(%s)) WHERE to_regclass(%s) IS NOT NULL",
                [index, index],
            )

    def backwards(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for index in indexes:
                schema_editor.execute(f"ALTER INDEX IF EXISTS {index} RESET (fastupdate)")

    return migrations.RunPython(forwards, backwards, elidable=False)
