from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class AcceptanceConfig(AppConfig):
    name = "apps.acceptance"
    label = "acceptance"
    verbose_name = _("Acceptance")
