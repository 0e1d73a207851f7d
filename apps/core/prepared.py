"""Queries PostgreSQL plans once per database connection.

A few queries cost more to plan than to run: a case's timeline asks some fifty
history tables for their newest rows in one statement, planned in about 11 ms and
run in 3. Such a query is sent through ``prepared_cursor()``: on PostgreSQL its
parameters are bound by the server and the statement is prepared on the
connection (psycopg keeps the prepared statements per connection and the server
keeps their plans), so a kept connection plans it once. Everywhere else, and where
``DATABASE_PREPARED_STATEMENTS`` is off (a connection pooler in transaction mode
older than PgBouncer 1.21 cannot keep them), it is an ordinary cursor.

The statement still goes through Django's cursor wrapper: it is counted, logged and
its errors read as Django's, as any other query.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from django.conf import settings
from django.db import connection

# psycopg prepares a statement once it has run this many times: never, but when asked.
NEVER_BY_COUNT = 2**31 - 1


class _PreparingCursor(psycopg.Cursor):
    """A cursor binding its parameters on the server that prepares what it runs."""

    def execute(self, query, params=None, *, prepare=None, binary=None):
        # Django turns psycopg's preparing off on the connection (no threshold): on for
        # this statement only, never for the statements the ORM sends.
        raw = self.connection
        threshold = raw.prepare_threshold
        raw.prepare_threshold = NEVER_BY_COUNT
        try:
            super().execute(query, params, prepare=True, binary=binary)
        finally:
            raw.prepare_threshold = threshold
        if self._query is None:
            # A prepared run keeps no query text; Django's query log reads it there.
            self._query = self._convert_query(query, params)
        return self


@contextmanager
def prepared_cursor() -> Iterator[Any]:
    """A cursor whose statements are prepared on the connection (PostgreSQL)."""
    if connection.vendor != "postgresql" or not settings.DATABASE_PREPARED_STATEMENTS:
        with connection.cursor() as cursor:
            yield cursor
        return
    connection.close_if_health_check_failed()
    connection.ensure_connection()
    wrapper: Any = connection
    with connection.wrap_database_errors:
        cursor = wrapper._prepare_cursor(_PreparingCursor(wrapper.connection))
    with cursor:
        yield cursor
