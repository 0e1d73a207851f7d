"""Search of cases on PostgreSQL: its words stored and indexed, its trigrams indexed
(``apps.core.search_indexes``). Nothing is done on SQLite."""

from django.db import migrations

from apps.core.search_indexes import document, search_index_operation


class Migration(migrations.Migration):
    dependencies = [("cases", "0009_input_bounds")]

    operations = [
        search_index_operation("cases_procurementcase", "cases", document("name", "requirements"))
    ]
