from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class SizingConfig(AppConfig):
    name = "apps.sizing"
    label = "sizing"
    verbose_name = _("Sizing")
