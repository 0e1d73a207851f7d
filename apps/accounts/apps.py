from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        from apps.accounts.roles import sync_role_permissions

        # Permissions are created by Django after each migrate; the role groups
        # are re-synced from ROLE_PERMISSIONS then, so code is the one source.
        post_migrate.connect(sync_role_permissions, dispatch_uid="accounts.sync_roles")
