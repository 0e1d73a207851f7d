from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CostsConfig(AppConfig):
    name = "apps.costs"
    label = "costs"
    verbose_name = _("Costs")
