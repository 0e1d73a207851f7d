from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _

from apps.core.signals import verification_recorded


class AcceptanceConfig(AppConfig):
    name = "apps.acceptance"
    label = "acceptance"
    verbose_name = _("Acceptance")

    def ready(self) -> None:
        # A verification the harness's upload composed may settle an approval subject to
        # acceptance of that offer (apps.acceptance.conditions).
        from apps.acceptance.tasks import on_verification_recorded

        verification_recorded.connect(
            on_verification_recorded, dispatch_uid="acceptance-settle-conditions"
        )
