"""Search of vendors on PostgreSQL: its words stored and indexed, its trigrams indexed
(``apps.core.search_indexes``). Nothing is done on SQLite."""

from django.db import migrations

from apps.core.search_indexes import document, search_index_operation


class Migration(migrations.Migration):
    dependencies = [("vendors", "0003_input_bounds")]

    operations = [
        search_index_operation(
            "vendors_vendor",
            "vendors",
            document("name", "jurisdiction", "regions", "contacts"),
            # Offers are found by their vendor's name alone, as typed.
            trigrams={"name_trigrams": "COALESCE(name, '')"},
        )
    ]
