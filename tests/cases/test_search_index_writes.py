"""On PostgreSQL every search index is written at once, with no pending list a search
would read whole until a vacuum (docs/search.md)."""

import pytest
from django.db import connection

from apps.casework.search import SOURCES

pytestmark = pytest.mark.postgres


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's GIN indexes")
def test_every_search_index_has_no_pending_list(db):
    tables = [source.queryset().model._meta.db_table for source in SOURCES]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT t.relname, i.relname, i.reloptions FROM pg_index x "
            "JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid "
            "JOIN pg_am a ON a.oid = i.relam WHERE a.amname = 'gin' AND t.relname = ANY(%s)",
            [tables],
        )
        found = cursor.fetchall()
    # Two indexes for each kind of record (its words, its trigrams), and the vendor's name.
    assert len(found) == 2 * len(SOURCES) + 1
    assert {table for table, _index, _options in found} == set(tables)
    assert all(options == ["fastupdate=off"] for _table, _index, options in found), found
