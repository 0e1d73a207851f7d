"""Search of offers on PostgreSQL: its words stored and indexed, its trigrams indexed
(``apps.core.search_indexes``). Nothing is done on SQLite."""

from django.db import migrations

from apps.core.search_indexes import document, search_index_operation


class Migration(migrations.Migration):
    dependencies = [("offers", "0006_input_bounds")]

    operations = [
        search_index_operation("offers_offer", "offers", document("accelerator_model", "notes"))
    ]
