"""The genesis head of the chain, and (on PostgreSQL) the function history triggers call.

The triggers themselves are attached after every migrate by
``apps.audit.triggers.install_history_triggers``, so history tables added by
later apps are covered as well.
"""

from django.db import migrations

GENESIS_HASH = "0" * 64

CREATE_FUNCTION = """
CREATE OR REPLACE FUNCTION diligence_refuse_history_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'history is append-only: % on %.% refused', TG_OP, TG_TABLE_SCHEMA, TG_TABLE_NAME
        USING ERRCODE = 'insufficient_privilege';
END;
$$ LANGUAGE plpgsql;
"""
DROP_FUNCTION = "DROP FUNCTION IF EXISTS diligence_refuse_history_change() CASCADE;"


def forwards(apps, schema_editor):
    ChainHead = apps.get_model("audit", "ChainHead")
    ChainHead.objects.get_or_create(pk=1, defaults={"seq": 0, "entry_hash": GENESIS_HASH})
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CREATE_FUNCTION, params=None)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(DROP_FUNCTION)


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
