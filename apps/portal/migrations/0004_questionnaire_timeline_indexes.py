from django.db import migrations

# The timeline's indexes of the questionnaires' case history tables (as audit 0003 makes
# them): the column leading to the case, then date and history id; and record, history id.
TIMELINE_INDEXES = [
    ("portal_historicalsentquestionnaire", "invitation_id", "tl_portal_sentquestionnaire"),
    ("portal_historicalquestionnaireanswer", "sent_id", "tl_portal_questionnaireanswer"),
]


class Migration(migrations.Migration):

    dependencies = [
        ("portal", "0003_questionnaires"),
    ]

    operations = [
        migrations.RunSQL(
            sql=[
                f'CREATE INDEX IF NOT EXISTS "{name}" ON "{table}" ("{column}", "history_date", "history_id")'
                for table, column, name in TIMELINE_INDEXES
            ]
            + [
                f'CREATE INDEX IF NOT EXISTS "{name}_prev" ON "{table}" ("id", "history_id")'
                for table, _column, name in TIMELINE_INDEXES
            ],
            reverse_sql=[
                f'DROP INDEX IF EXISTS "{name}{suffix}"'
                for _table, _column, name in TIMELINE_INDEXES
                for suffix in ("", "_prev")
            ],
        ),
    ]
