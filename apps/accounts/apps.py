from django.apps import AppConfig
from django.conf import settings
from django.core import checks
from django.db.models.signals import post_migrate

from apps.core.roles import Role


def check_two_factor_roles(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """TWO_FACTOR_REQUIRED_ROLES names roles that exist: a typo would require nothing."""
    unknown = sorted(set(settings.TWO_FACTOR_REQUIRED_ROLES) - set(Role.values))
    if not unknown:
        return []
    return [
        checks.Error(
            f"TWO_FACTOR_REQUIRED_ROLES names no such role: {', '.join(unknown)}",
            hint=f"Use role names from: {', '.join(Role.values)}",
            id="accounts.E001",
        )
    ]


class AccountsConfig(AppConfig):
    name = "apps.accounts"
    label = "accounts"

    def ready(self) -> None:
        from apps.accounts import twofactor  # noqa: F401  (its sign-in signal receiver)
        from apps.accounts.roles import sync_role_permissions

        checks.register(check_two_factor_roles)

        # Permissions are created by Django after each migrate; the role groups
        # are re-synced from ROLE_PERMISSIONS then, so code is the one source.
        post_migrate.connect(sync_role_permissions, dispatch_uid="accounts.sync_roles")
