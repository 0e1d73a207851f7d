"""The migration operation that gives a case history table the indexes its timeline reads
(as the audit app's ``0003_case_timeline_indexes`` gave the tables that were there then).

(the column leading to the case, date, history id): a timeline page is a short range of
it, read backwards, however long the history; (record id, history id): the row a row's
field diff is made against is one probe. The statements are the same on SQLite and
PostgreSQL, and a rerun is harmless.
"""

from django.db import migrations


def timeline_indexes_operation(*indexes: tuple[str, str, str]) -> migrations.RunSQL:
    """Indexes for each ``(history table, column leading to the case, index name)``."""
    return migrations.RunSQL(
        sql=tuple(
            f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}", "history_date", '
            '"history_id")'
            for table, column, name in indexes
        )
        + tuple(
            f'CREATE INDEX IF NOT EXISTS "{name}_prev" ON "{table}" ("id", "history_id")'
            for table, _column, name in indexes
        ),
        reverse_sql=tuple(
            f'DROP INDEX IF EXISTS "{name}{suffix}"'
            for _table, _column, name in indexes
            for suffix in ("", "_prev")
        ),
    )
