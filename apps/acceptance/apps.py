from django.apps import AppConfig


class AcceptanceConfig(AppConfig):
    name = "apps.acceptance"
    label = "acceptance"
