from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from apps.core.signals import account_deactivated


class EvidenceConfig(AppConfig):
    name = "apps.evidence"
    label = "evidence"
    verbose_name = _("Evidence")

    def ready(self) -> None:
        from apps.evidence.services import revoke_tokens_of_deactivated

        # A person switched off: the harness tokens they issued stop working at once.
        account_deactivated.connect(
            revoke_tokens_of_deactivated, dispatch_uid="evidence.revoke_tokens_of_deactivated"
        )
