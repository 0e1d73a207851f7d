from django.db import migrations

from apps.core.history_indexes import timeline_indexes_operation

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
        timeline_indexes_operation(*TIMELINE_INDEXES),
    ]
