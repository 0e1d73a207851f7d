"""Changes made behind the application's back, with raw SQL, as a database superuser could.

On PostgreSQL the history triggers refuse such changes, so the helpers switch
triggers off for the test's transaction first, as a superuser can
(``session_replication_role = replica``).
"""

from contextlib import contextmanager

from django.db import connection


def _q(name: str) -> str:
    return connection.ops.quote_name(name)


@contextmanager
def triggers_off(table: str):
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL session_replication_role = replica")
    yield
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL session_replication_role = DEFAULT")


def raw_update(model, pk, column: str, value) -> None:
    table = model._meta.db_table
    with triggers_off(table), connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_q(table)} SET {_q(column)} = %s WHERE {_q(model._meta.pk.column)} = %s",
            [value, pk],
        )
        assert cursor.rowcount == 1


def raw_delete(model, pk) -> None:
    table = model._meta.db_table
    with triggers_off(table), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {_q(table)} WHERE {_q(model._meta.pk.column)} = %s", [pk])
        assert cursor.rowcount == 1


def raw_insert_copy(model, pk) -> int:
    """Insert a copy of history row ``pk`` under a new id; returns the new id."""
    table = model._meta.db_table
    columns = [f.column for f in model._meta.concrete_fields if not f.primary_key]
    listed = ", ".join(_q(c) for c in columns)
    pk_column = _q(model._meta.pk.column)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {_q(table)} ({listed}) SELECT {listed} FROM {_q(table)} "
            f"WHERE {pk_column} = %s",
            [pk],
        )
        cursor.execute(f"SELECT MAX({pk_column}) FROM {_q(table)}")
        return cursor.fetchone()[0]


def chain_restore_to(seq: int) -> None:
    """As after a database restore from a backup taken at chain entry ``seq``.

    Later chain entries and the history rows they chained are gone, and the
    head names entry ``seq`` again: the chain left behind links up cleanly.
    """
    from apps.audit.chain import HEAD_PK
    from apps.audit.models import ChainEntry, ChainHead

    later = ChainEntry.objects.filter(seq__gt=seq).select_related("content_type")
    for entry in list(later.order_by("-seq")):
        raw_delete(entry.content_type.model_class(), entry.history_id)
        raw_delete(ChainEntry, entry.pk)
    kept = ChainEntry.objects.get(seq=seq)
    raw_update(ChainHead, HEAD_PK, "seq", seq)
    raw_update(ChainHead, HEAD_PK, "entry_hash", kept.entry_hash)
