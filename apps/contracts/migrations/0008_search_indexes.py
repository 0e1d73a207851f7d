"""Search of contract clauses on PostgreSQL: its words stored and indexed, its trigrams indexed
(``apps.core.search_indexes``). Nothing is done on SQLite."""

from django.db import migrations

from apps.core.search_indexes import document, search_index_operation


class Migration(migrations.Migration):
    dependencies = [("contracts", "0007_input_bounds")]

    operations = [
        search_index_operation(
            "contracts_checklistitem",
            "clauses",
            document("title", "clause_reference", "excerpt", "note"),
        )
    ]
