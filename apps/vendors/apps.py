from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class VendorsConfig(AppConfig):
    name = "apps.vendors"
    label = "vendors"
    verbose_name = _("Vendors")
