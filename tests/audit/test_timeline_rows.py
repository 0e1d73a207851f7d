"""The timeline reads the rows of every history table on a page in one query, each row as
JSON of its columns: every value must read back exactly as the ORM reads it."""

import pytest

from apps.audit.sources import all_sources
from apps.audit.timeline import _rows_with_predecessors

pytestmark = pytest.mark.postgres


def _sources_with_rows():
    return [source for source in all_sources() if source.history_model._base_manager.exists()]


def test_every_history_row_of_the_demo_reads_back_as_the_orm_reads_it(seeded_demo):
    sources = _sources_with_rows()
    assert len(sources) > 10  # the demo writes most kinds of record
    wanted = {
        index: list(source.history_model._base_manager.values_list("history_id", flat=True))
        for index, source in enumerate(sources)
    }
    rows = _rows_with_predecessors(sources, wanted)
    compared = 0
    for index, source in enumerate(sources):
        fields = source.history_model._meta.concrete_fields
        orm = {row.history_id: row for row in source.history_model._base_manager.all()}
        assert {row.history_id for row in rows[index]} == set(orm)
        for row in rows[index]:
            for model_field in fields:
                read = getattr(row, model_field.attname)
                expected = getattr(orm[row.history_id], model_field.attname)
                assert (read, type(read)) == (expected, type(expected)), (
                    source.key,
                    model_field.attname,
                )
                compared += 1
    assert compared > 1000


def test_a_page_of_many_tables_costs_one_query_for_its_rows(seeded_demo, django_assert_num_queries):
    sources = _sources_with_rows()
    wanted = {
        index: list(source.history_model._base_manager.values_list("history_id", flat=True)[:3])
        for index, source in enumerate(sources)
    }
    with django_assert_num_queries(1):
        _rows_with_predecessors(sources, wanted)
