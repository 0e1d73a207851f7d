from django.apps import AppConfig
from django.conf import settings
from django.utils.translation import gettext_lazy as _


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"
    verbose_name = _("Stored files and webhooks")

    def ready(self) -> None:
        if settings.RUNSERVER:
            from apps.core.devserver import widen_backlog

            widen_backlog()
