from django.apps import AppConfig
from django.conf import settings


class CoreConfig(AppConfig):
    name = "apps.core"
    label = "core"

    def ready(self) -> None:
        if settings.RUNSERVER:
            from apps.core.devserver import widen_backlog

            widen_backlog()
