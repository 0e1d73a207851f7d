"""PostgreSQL triggers that refuse UPDATE and DELETE on history tables and the chain.

The function ``diligence_refuse_history_change()`` is installed by migration
``0002``; the triggers are (re)attached after every ``migrate`` to every
history table then installed, so apps added later are covered too. On SQLite
there are no triggers: the hash chain still detects any change.

A consequence: a user who appears in history can never be deleted (Django
would set ``history_user`` to NULL, an UPDATE the trigger refuses). Users are
deactivated instead. TRUNCATE is left to the database owner (test databases
are flushed with it); the chain verifier reports the rows it removes.
"""

from django.db import connection

from apps.audit.chain import tracked_history_models
from apps.audit.models import ChainEntry

FUNCTION = "diligence_refuse_history_change"
TRIGGER = "diligence_refuse_history_change"


def protected_tables() -> list[str]:
    return [model._meta.db_table for model in tracked_history_models()] + [
        ChainEntry._meta.db_table
    ]


def install_history_triggers(sender=None, using="default", **kwargs) -> None:
    if connection.vendor != "postgresql":
        return
    existing = set(connection.introspection.table_names())
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_proc WHERE proname = %s", [FUNCTION])
        if cursor.fetchone() is None:
            return  # migrated back before 0002
        for table in protected_tables():
            if table not in existing:
                continue
            cursor.execute(
                f"CREATE OR REPLACE TRIGGER {TRIGGER} BEFORE UPDATE OR DELETE ON "
                f"{connection.ops.quote_name(table)} FOR EACH ROW EXECUTE FUNCTION {FUNCTION}()"
            )
