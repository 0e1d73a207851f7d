"""Permission checks with a user's own and their groups' permissions read in one statement.

Django's ``ModelBackend`` reads them in two queries (the user's, then their
groups'), each built anew, on every request that checks a permission: every
page. This backend sits before it in ``AUTHENTICATION_BACKENDS`` and fills the
same per-request cache on the user (``_perm_cache``) from one statement, so the
``ModelBackend`` after it answers from that cache. Signing in and loading the
signed-in user stay with ``ModelBackend``: sessions name it, as before.
"""

from functools import cache

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.db import connection


@cache
def _permissions_statement() -> str:
    """``app_label, codename`` of every permission given to user %s or to their groups."""
    q = connection.ops.quote_name
    user_perms = get_user_model()._meta.get_field("user_permissions")
    user_groups = get_user_model()._meta.get_field("groups")
    group_perms = Group._meta.get_field("permissions")
    # Built from the models' table and column names only; the user id is a parameter.
    return (
        f"SELECT ct.{q('app_label')}, p.{q('codename')}"  # noqa: S608
        f" FROM {q(Permission._meta.db_table)} p"
        f" INNER JOIN {q(ContentType._meta.db_table)} ct ON ct.{q('id')} = p.{q('content_type_id')}"
        f" WHERE p.{q('id')} IN ("
        f"SELECT up.{q(user_perms.m2m_reverse_name())} FROM {q(user_perms.m2m_db_table())} up"
        f" WHERE up.{q(user_perms.m2m_column_name())} = %s"
        f" UNION SELECT gp.{q(group_perms.m2m_reverse_name())}"
        f" FROM {q(group_perms.m2m_db_table())} gp"
        f" INNER JOIN {q(user_groups.m2m_db_table())} ug"
        f" ON ug.{q(user_groups.m2m_reverse_name())} = gp.{q(group_perms.m2m_column_name())}"
        f" WHERE ug.{q(user_groups.m2m_column_name())} = %s)"
    )


class OneQueryPermissionBackend(ModelBackend):
    """``ModelBackend``'s permission answers, read in one query.

    It checks no password (``ModelBackend`` does, once); it loads the user of a
    session that names it, as ``ModelBackend`` would.
    """

    def authenticate(self, request, username=None, password=None, **kwargs):
        return None

    def get_all_permissions(self, user_obj, obj=None):
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if user_obj.is_superuser:
            return super().get_all_permissions(user_obj)
        if not hasattr(user_obj, "_perm_cache"):
            with connection.cursor() as cursor:
                cursor.execute(_permissions_statement(), [user_obj.pk, user_obj.pk])
                rows = cursor.fetchall()
            user_obj._perm_cache = {f"{app_label}.{codename}" for app_label, codename in rows}
        return user_obj._perm_cache
