"""The search indexes written at once, without a pending list (apps/core/search_indexes.py)."""

from django.db import migrations

from apps.core.search_indexes import without_pending_list_operation


class Migration(migrations.Migration):
    dependencies = [
        ("casework", "0001_reassessments"),
        ("cases", "0011_case_standing_parts_and_area_marks"),
        ("contracts", "0010_contract_documents"),
        ("evidence", "0009_newest_index"),
        ("offers", "0008_newest_index"),
        ("vendors", "0006_contacts_subprocessors_certifications"),
    ]

    operations = [
        without_pending_list_operation(
            "cases_search_words",
            "cases_search_trigrams",
            "vendors_search_words",
            "vendors_search_trigrams",
            "vendors_search_name_trigrams",
            "offers_search_words",
            "offers_search_trigrams",
            "clauses_search_words",
            "clauses_search_trigrams",
            "bundles_search_words",
            "bundles_search_trigrams",
        )
    ]
