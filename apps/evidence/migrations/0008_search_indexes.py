"""Search of evidence bundles on PostgreSQL: its words stored and indexed, its trigrams indexed
(``apps.core.search_indexes``). Nothing is done on SQLite."""

from django.db import migrations

from apps.core.search_indexes import document, search_index_operation


class Migration(migrations.Migration):
    dependencies = [("evidence", "0007_input_bounds")]

    operations = [
        search_index_operation(
            "evidence_evidencebundle",
            "bundles",
            document("sha256", "bundle_uuid", "host_id", "harness_version"),
        )
    ]
