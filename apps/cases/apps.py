from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class CasesConfig(AppConfig):
    name = "apps.cases"
    label = "cases"
    verbose_name = _("Case")
