from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class PacketsConfig(AppConfig):
    name = "apps.packets"
    label = "packets"
    verbose_name = _("Packets")
