"""Queries that cost more to plan than to run are prepared on a PostgreSQL connection
and planned once; they are still counted as queries, and turned off by a setting."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from apps.core.prepared import prepared_cursor
from tests.factories import make_case

pytestmark = pytest.mark.postgres


def _prepared_statements() -> list[str]:
    if connection.vendor != "postgresql":
        return []
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


def _count_cases(case_pk: int) -> int:
    with prepared_cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM cases_procurementcase WHERE id >= %s", [case_pk])
        return cursor.fetchone()[0]


def test_a_prepared_query_reads_as_any_other_and_is_counted(db, priya):
    case = make_case(priya)
    with CaptureQueriesContext(connection) as queries:
        first, again = _count_cases(case.pk), _count_cases(case.pk + 1)
    assert (first, again) == (1, 0)
    assert len(queries.captured_queries) == 2
    assert "cases_procurementcase" in queries.captured_queries[0]["sql"]


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares")
def test_on_postgresql_the_statement_is_prepared_on_the_connection(db, priya):
    case = make_case(priya)
    _count_cases(case.pk)
    assert any("WHERE id >= $1" in text for text in _prepared_statements())
    # The ORM's own statements stay unprepared (Django binds them on the client).
    list(type(case).objects.filter(pk=case.pk))
    assert all("cases_procurementcase" not in s or "$1" in s for s in _prepared_statements())


def test_the_setting_turns_it_off(db, priya, settings):
    settings.DATABASE_PREPARED_STATEMENTS = False
    case = make_case(priya)
    assert _count_cases(case.pk) == 1
    assert not any("WHERE id >= $1" in text for text in _prepared_statements())


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL prepares")
def test_the_case_timeline_is_read_through_a_prepared_statement(client, priya):
    case = make_case(priya)
    client.force_login(priya)
    for _ in range(2):
        response = client.get(reverse("audit:case-timeline", args=[case.pk]))
        assert response.status_code == 200
        assert case.name in response.content.decode()
    assert any("UNION ALL" in text and "history_date" in text for text in _prepared_statements())
